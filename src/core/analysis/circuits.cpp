#include "analysis/circuits.h"

#include "analysis/corruptedrun.h"

#include "engine/blockcomponents.h"
#include "engine/engine.h"
#include "engine/feedforward.h"
#include "engine/outputhead.h"
#include "model/blockrecipe.h"
#include "ops/ops.h"
#include "tensor/matrixproduct.h"
#include "trace/names.h"
#include "train/backwardpass.h"
#include "util/error.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

namespace atlas {

namespace {

// Checks the program makes, for every layer, the tensors the graph edits and reads.
std::string programProblem(const Program &program, int layers)
{
    if (program.producerOf(names::haltingTensor("out")) >= 0)
        return "the model halts by adaptive computation time: ln_f reads the blocks' outputs mixed with weights that "
               "depend on them, which a graph of edges summed into one stream does not describe";
    for (int l = 0; l < layers; ++l)
        for (const char *what : {"attn.q", "attn.k", "attn.v", "attn.context"})
            if (program.producerOf(names::layerTensor(l, what)) < 0)
                return "layer " + std::to_string(l) + "'s attention has no " + what
                    + " per head (an efficient attention kernel): circuits need exact attention";
    return {};
}

Tensor copyTensor(const Tensor &t)
{
    Tensor out = Tensor::uninitialized(t.shape());
    std::copy_n(t.data(), t.numel(), out.data());
    return out;
}

} // namespace

const char *attributionMethodName(AttributionMethod method)
{
    return method == AttributionMethod::Eap ? "eap" : "eap-ig";
}

AttributionMethod attributionMethodFromName(const std::string &name)
{
    if (name == "eap")
        return AttributionMethod::Eap;
    if (name == "eap-ig")
        return AttributionMethod::EapIg;
    throw Error("attribution method \"" + name + "\": use eap or eap-ig");
}

CircuitWork circuitWork(const Model &model, int tokens, double tracedBytes, int gradientSteps)
{
    const ModelConfig &c = model.config;
    double parameters = 0;
    for (const auto &[name, p] : model.parameters())
        parameters += double(p->numel());
    const double senders = 1.0 + double(c.layers) * (c.heads + 1);
    CircuitWork w;
    w.bytes = 3.0 * tracedBytes + 2.0 * senders * double(tokens) * c.dModel * sizeof(float)
        + (gradientSteps > 0 ? parameters * sizeof(float) : 0.0);
    w.flops = (2.0 + 3.0 * std::max(0, gradientSteps)) * Model::forwardFlopsOf(c, tokens);
    w.what = "Circuits on " + countOf(size_t(tokens), "token") + " ("
        + countOf(size_t(std::max(0, gradientSteps)), "gradient") + ")";
    return w;
}

struct CircuitAnalysis::Impl
{
    std::shared_ptr<const Model> model;
    const ModelConfig &c;
    ResidualGraphLayout layout;
    PatchMetric metric;
    int position = 0;
    std::unique_ptr<Engine> cleanRun;
    std::unique_ptr<CorruptedRun> corruptedRun; // never edited
    std::unique_ptr<CorruptedRun> work; // edited
    int dirtyFrom = std::numeric_limits<int>::max(); // the earliest op the work run's trace was edited at
    double clean = 0, corrupted = 0;
    std::vector<Tensor> cleanOut, corruptedOut; // per sender, what it writes into the stream [T, D]
    Gradients gradients; // the few parameters' gradients an inputs-only backward pass still makes, unread

    Impl(std::shared_ptr<const Model> m, const PatchMetric &pm)
        : model(std::move(m))
        , c(model->config)
        , metric(pm)
    {
    }

    const CircuitGraph &graph() const { return layout.graph; }
    int64_t T() const { return cleanRun->input().tokens.size(); }
    const BlockWeights &block(int layer) const { return model->blocks[size_t(layer)]; }

    // What sender s writes into the stream in the run whose trace is `trace`.
    Tensor senderOutput(const Trace &trace, int s) const
    {
        const CircuitNode &n = graph().senders[size_t(s)];
        const Tensor &t = trace.tensor(layout.written[size_t(s)]);
        if (n.kind != CircuitNode::Kind::Head)
            return copyTensor(t);
        Tensor out({T(), int64_t(c.dModel)});
        headWrite(out, t.slice(n.head), c, block(n.layer), n.head);
        if (const std::optional<SenderNorm> &norm = layout.writeNorms[size_t(s)])
            normShare(out, trace.tensor(norm->sum), block(n.layer).normWeight(norm->norm), c);
        return out;
    }

    // The op after which receiver r's edit is written, and the tensor it edits.
    std::string editedTensor(int r) const
    {
        const CircuitReceiver &v = graph().receivers[size_t(r)];
        switch (v.port) {
        case ReadPort::Query:
            return names::layerTensor(v.layer, "attn.q");
        case ReadPort::Key:
            return names::layerTensor(v.layer, "attn.k");
        case ReadPort::Value:
            return names::layerTensor(v.layer, "attn.v");
        case ReadPort::Mlp:
        case ReadPort::Logits:
            return layout.reads[size_t(r)].edited;
        }
        return {};
    }
    int editOp(int r) const { return work->engine().program().producerOf(editedTensor(r)); }

    // Writes into `t` (the tensor editedTensor(r) names) what receiver r computes from the stream x [T, D].
    void applyReceiver(Tensor &t, int r, const Tensor &x) const
    {
        const CircuitReceiver &v = graph().receivers[size_t(r)];
        if (v.port == ReadPort::Logits) {
            std::copy_n(x.data(), x.numel(), t.data());
            return;
        }
        const ResidualReadPoint &at = layout.reads[size_t(r)];
        const BlockWeights &b = block(v.layer);
        Tensor normed = at.norm ? Tensor::uninitialized(x.shape()) : copyTensor(x);
        if (at.norm)
            normForward(normed, x, b.normWeight(*at.norm), b.normBias(*at.norm), c);
        if (v.port == ReadPort::Mlp) {
            const Tensor &read = at.norm ? normed : feedForwardActivations(c, b, normed).act;
            std::copy_n(read.data(), read.numel(), t.data());
            return;
        }
        const int which = v.port == ReadPort::Query ? 0 : v.port == ReadPort::Key ? 1 : 2;
        Tensor head = Tensor::uninitialized({T(), int64_t(c.headDim())});
        projectHead(head, normed, c, b, which, v.head);
        const int group = which == 0 ? 1 : c.queriesPerKv(); // the trace repeats a K/V head per query head
        for (int h = 0; h < t.dim(0); ++h)
            if ((which == 0 ? h : h / group) == v.head)
                t.slice(h) = head.matrix();
    }

    // Writes into `t` what receiver r reads in the corrupted run, copied from that run's own tensor.
    void applyCorrupted(Tensor &t, int r) const
    {
        const CircuitReceiver &v = graph().receivers[size_t(r)];
        const Tensor &from = corruptedRun->engine().trace().tensor(editedTensor(r));
        if (v.port == ReadPort::Mlp || v.port == ReadPort::Logits) {
            std::copy_n(from.data(), from.numel(), t.data());
            return;
        }
        const int group = v.port == ReadPort::Query ? 1 : c.queriesPerKv();
        for (int h = 0; h < t.dim(0); ++h)
            if (h / group == v.head)
                t.slice(h) = from.slice(h);
    }

    // The stream receiver r reads in the corrupted run plus, for each of its edges `kept` keeps, the change
    // `now[sender]` − corruptedOut[sender].
    Tensor receiverInput(int r, const std::function<bool(int)> &kept, const std::function<const Tensor &(int)> &now)
    {
        Tensor x = copyTensor(corruptedRun->engine().trace().tensor(layout.reads[size_t(r)].stream));
        const auto [first, last] = graph().edgesOf[size_t(r)];
        for (int e = first; e < last; ++e) {
            if (!kept(e))
                continue;
            const int s = graph().edges[size_t(e)].sender;
            x.matrix() += now(s).matrix() - corruptedOut[size_t(s)].matrix();
        }
        return x;
    }

    // The work run from op `from` with `edits`, first recomputing what an earlier run edited before `from`.
    void runWork(int from, const TraceEdits &edits, bool throughHead = false)
    {
        const int start = std::min(from, dirtyFrom);
        work->runFrom(start, edits, throughHead);
        dirtyFrom = from;
    }

    double workMetric() const { return metricOf(work->engine(), metric, position); }
};

CircuitAnalysis::CircuitAnalysis(std::shared_ptr<const Model> model, const Input &cleanInput,
    const Corruption &corruption, const PatchMetric &metric, const WorkBudget &budget)
    : m(std::make_unique<Impl>(model, metric))
{
    m->layout = residualGraphLayout(*model);
    if (!m->layout.problem.empty())
        throw Error("circuits: " + m->layout.problem);
    const Input clean {cleanInput.tokens, cleanInput.padding};
    PatchingOptions options;
    options.metric = metric;
    if (const std::string why = patchingProblem(*model, clean, corruption, options); !why.empty())
        throw Error("circuits: " + why);
    m->cleanRun = std::make_unique<Engine>(model, clean);
    if (const std::string why = programProblem(m->cleanRun->program(), model->config.layers); !why.empty())
        throw Error("circuits: " + why);
    const CircuitWork work
        = circuitWork(*model, int(clean.tokens.size()), double(m->cleanRun->estimatedTraceBytes()), 1);
    if (const std::string why = overBudget(work.what, work.flops, work.bytes, budget); !why.empty())
        throw Error(why);
    m->position = resolvedPosition(metric, clean.tokens.size());
    m->cleanRun->runTo(outputHeadStart(m->cleanRun->program()));
    m->clean = metricOf(*m->cleanRun, metric, m->position);
    m->corruptedRun = std::make_unique<CorruptedRun>(model, clean, corruption);
    m->corruptedRun->runFrom(0, {});
    m->corrupted = metricOf(m->corruptedRun->engine(), metric, m->position);
    if (std::abs(m->clean - m->corrupted) <= 1e-9 * std::max(1.0, std::abs(m->clean)))
        throw Error("circuits: the clean and the corrupted run give the same metric (" + std::to_string(m->clean)
            + "): there is nothing to recover; corrupt the input differently");
    m->work = std::make_unique<CorruptedRun>(model, clean, corruption);
    m->dirtyFrom = 0; // the first run of the work run starts at its first op, where the noise on X₀ is written
    for (size_t s = 0; s < m->graph().senders.size(); ++s) {
        m->cleanOut.push_back(m->senderOutput(m->cleanRun->trace(), int(s)));
        m->corruptedOut.push_back(m->senderOutput(m->corruptedRun->engine().trace(), int(s)));
    }
}

CircuitAnalysis::~CircuitAnalysis() = default;

const CircuitGraph &CircuitAnalysis::graph() const
{
    return m->graph();
}
double CircuitAnalysis::clean() const
{
    return m->clean;
}
double CircuitAnalysis::corrupted() const
{
    return m->corrupted;
}
int CircuitAnalysis::position() const
{
    return m->position;
}
const std::vector<int> &CircuitAnalysis::corruptedTokens() const
{
    return m->corruptedRun->engine().input().tokens;
}

double CircuitAnalysis::edgePatched(int edge)
{
    const CircuitEdge e = graph().edges.at(size_t(edge));
    const Tensor x = m->receiverInput(
        e.receiver, [edge](int k) { return k == edge; },
        [this](int s) -> const Tensor & { return m->cleanOut[size_t(s)]; });
    m->runWork(
        m->editOp(e.receiver), {{m->editedTensor(e.receiver), [&](Tensor &t) { m->applyReceiver(t, e.receiver, x); }}});
    return m->workMetric();
}

std::vector<double> CircuitAnalysis::everyEdgePatched(const CircuitProgress &progress, const std::atomic<bool> *cancel)
{
    const size_t E = graph().edges.size();
    std::vector<double> metrics(E);
    for (size_t done = 0; done < E; ++done) { // the last receiver's first: each run starts no later than the last
        if ((cancel && cancel->load()) || (progress && !progress(int(done), int(E))))
            throw Error("circuits: cancelled");
        const size_t e = E - 1 - done;
        metrics[e] = edgePatched(int(e));
    }
    if (progress)
        progress(int(E), int(E));
    return metrics;
}

double CircuitAnalysis::circuitMetric(const std::vector<bool> &kept)
{
    const CircuitGraph &g = graph();
    if (kept.size() != g.edges.size())
        throw Error(
            "circuits: " + std::to_string(kept.size()) + " flags for " + std::to_string(g.edges.size()) + " edges");
    // What each sender writes in this run, made once its layer has run: the embedding's is the clean one.
    std::vector<Tensor> now(g.senders.size());
    now[0] = copyTensor(m->cleanOut[0]);
    const auto output = [&](int s) -> const Tensor & {
        if (now[size_t(s)].empty())
            now[size_t(s)] = m->senderOutput(m->work->engine().trace(), s);
        return now[size_t(s)];
    };
    const auto isKept = [&](int e) { return bool(kept[size_t(e)]); };
    TraceEdits edits;
    std::map<std::string, std::vector<int>> byTensor;
    for (size_t r = 0; r < g.receivers.size(); ++r)
        byTensor[m->editedTensor(int(r))].push_back(int(r));
    int first = std::numeric_limits<int>::max();
    for (const auto &entry : byTensor) {
        const std::vector<int> &readers
            = entry.second; // a named copy for the lambda (clang 14 cannot capture a binding)
        first = std::min(first, m->editOp(readers.front()));
        edits[entry.first] = [&, readers](Tensor &t) {
            for (int r : readers) {
                const auto [begin, end] = g.edgesOf[size_t(r)];
                bool any = false;
                for (int e = begin; e < end && !any; ++e)
                    any = kept[size_t(e)];
                if (any)
                    m->applyReceiver(t, r, m->receiverInput(r, isKept, output));
                else
                    m->applyCorrupted(t, r);
            }
        };
    }
    m->runWork(first, edits);
    return m->workMetric();
}

double CircuitAnalysis::pathPatched(int sender, const std::vector<int> &receivers, bool throughMlps)
{
    const CircuitGraph &g = graph();
    if (sender < 0 || sender >= int(g.senders.size()))
        throw Error("path patching: no sender " + std::to_string(sender));
    if (receivers.empty())
        throw Error("path patching: no receiver");
    const CircuitNode s = g.senders[size_t(sender)];
    for (int r : receivers) {
        if (r < 0 || r >= int(g.receivers.size()))
            throw Error("path patching: no receiver " + std::to_string(r));
        if (g.findEdge(sender, r) < 0)
            throw Error("path patching: " + g.receivers[size_t(r)].name() + " reads the stream before " + s.name()
                + " writes into it");
    }
    // Pass 1: the sender clean, every other head frozen at its corrupted output, the feed-forwards recomputed
    // (throughMlps) or frozen; what the receivers read is kept.
    const Trace &corruptedTrace = m->corruptedRun->engine().trace(), &cleanTrace = m->cleanRun->trace();
    TraceEdits freeze;
    int from = std::numeric_limits<int>::max();
    const Program &program = m->work->engine().program();
    for (size_t k = 0; k < g.senders.size(); ++k) {
        const CircuitNode &n = g.senders[k];
        const std::string &tensor = m->layout.written[k];
        const bool isSender = int(k) == sender;
        if (n.kind == CircuitNode::Kind::Embedding && !isSender)
            continue; // the corrupted run's own
        if (n.kind == CircuitNode::Kind::Mlp && !isSender && (throughMlps || n.layer < s.layer))
            continue;
        if (n.kind == CircuitNode::Kind::Head && n.layer < s.layer)
            continue;
        if (n.kind == CircuitNode::Kind::Head && n.head != 0)
            continue; // a layer's heads share one tensor: edited once, below
        from = std::min(from, program.producerOf(tensor));
        freeze[tensor] = [&, n, isSender, tensor](Tensor &t) {
            if (n.kind != CircuitNode::Kind::Head) {
                const Tensor &v = (isSender ? cleanTrace : corruptedTrace).tensor(tensor);
                std::copy_n(v.data(), v.numel(), t.data());
                return;
            }
            const Tensor &frozen = corruptedTrace.tensor(tensor);
            std::copy_n(frozen.data(), frozen.numel(), t.data());
            if (s.kind == CircuitNode::Kind::Head && s.layer == n.layer)
                t.slice(s.head) = cleanTrace.tensor(tensor).slice(s.head);
        };
    }
    m->runWork(from, freeze);
    std::vector<Tensor> inputs;
    for (int r : receivers)
        inputs.push_back(copyTensor(m->work->engine().trace().tensor(m->layout.reads[size_t(r)].stream)));
    // Pass 2: the corrupted run with the receivers reading those streams.
    TraceEdits patch;
    int first = std::numeric_limits<int>::max();
    for (size_t k = 0; k < receivers.size(); ++k) {
        const int r = receivers[k];
        first = std::min(first, m->editOp(r));
        auto previous = patch[m->editedTensor(r)];
        patch[m->editedTensor(r)] = [this, previous, r, &inputs, k](Tensor &t) {
            if (previous)
                previous(t);
            m->applyReceiver(t, r, inputs[k]);
        };
    }
    m->runWork(first, patch);
    return m->workMetric();
}

EdgeAttribution CircuitAnalysis::attribute(
    AttributionMethod method, int steps, const CircuitProgress &progress, const std::atomic<bool> *cancel)
{
    if (method == AttributionMethod::Eap)
        steps = 1;
    if (steps < 1 || steps > 1000)
        throw Error("EAP-IG: " + std::to_string(steps) + " steps; give 1 … 1000");
    const CircuitGraph &g = graph();
    const ModelConfig &c = m->c;
    const int64_t T = m->T(), D = c.dModel, d = c.headDim();
    EdgeAttribution result;
    result.method = method;
    result.steps = steps;
    result.score.assign(g.edges.size(), 0.0);
    const int64_t S = int64_t(g.senders.size()), width = T * D;
    Tensor deltas({S, width}); // per sender, what it writes in the clean run minus in the corrupted one
    for (int64_t s = 0; s < S; ++s) {
        RowVectorMap row(deltas.data() + s * width, width);
        row = ConstRowVectorMap(m->cleanOut[size_t(s)].data(), width)
            - ConstRowVectorMap(m->corruptedOut[size_t(s)].data(), width);
    }
    const std::string embedding = names::residualStream(0);
    const int embeddingOp = m->work->engine().program().producerOf(embedding);
    const double weight = 1.0 / steps;
    // Receivers' gradients at their streams, one row [T·D] each: every edge into them scored at once, as the rows of
    // delta · gradientsᵀ.
    const auto score = [&](const std::vector<int> &receivers, const Tensor &gradients) {
        Tensor products({S, int64_t(receivers.size())});
        matrixProduct(products.matrix(), std::as_const(deltas).matrix(), false, gradients.matrix(), true, false);
        for (size_t k = 0; k < receivers.size(); ++k) {
            const auto [first, last] = g.edgesOf[size_t(receivers[k])];
            for (int e = first; e < last; ++e)
                result.score[size_t(e)] += weight
                    * double(products.data()[int64_t(g.edges[size_t(e)].sender) * products.dim(1) + int64_t(k)]);
        }
    };
    for (int k = 1; k <= steps; ++k) {
        if ((cancel && cancel->load()) || (progress && !progress(k - 1, steps)))
            throw Error("circuits: cancelled");
        const double alpha = method == AttributionMethod::Eap ? 0.0 : (k - 0.5) / steps;
        Engine *run = &m->corruptedRun->engine(); // EAP: the corrupted run itself, its output head run once
        if (alpha > 0) {
            TraceEdits edits;
            edits[embedding] = [&](Tensor &x) { x.matrix() += float(alpha) * (m->cleanOut[0].matrix() - x.matrix()); };
            m->runWork(embeddingOp, edits, true);
            run = &m->work->engine();
            ++result.forwardPasses;
        } else {
            run->runTo(run->opCount());
        }
        const Trace &trace = run->trace();
        // dM/dlogits at the metric's position.
        const Tensor &logits = trace.tensor("logits");
        const int64_t V = logits.dim(1);
        Tensor dlogits(logits.shape());
        float *row = dlogits.data() + int64_t(m->position) * V;
        if (m->metric.contrast >= 0) {
            row[m->metric.target] = 1.0f;
            row[m->metric.contrast] = -1.0f;
        } else {
            const float *z = logits.data() + int64_t(m->position) * V;
            const double top = *std::max_element(z, z + V);
            double sum = 0;
            for (int64_t v = 0; v < V; ++v)
                sum += std::exp(double(z[v]) - top);
            const double p = std::exp(double(z[m->metric.target]) - top) / sum;
            for (int64_t v = 0; v < V; ++v)
                row[v] = float(-p * std::exp(double(z[v]) - top) / sum);
            row[m->metric.target] += float(p);
        }
        BackwardPass pass(*m->model, run->input(), m->gradients, 1, BackwardPass::Computes::InputsOnly);
        pass.setActivations(&trace);
        // Receiver r's gradient at its stream, written into `out` ([T·D] floats): back through its norm.
        const auto normBackward = [&](int r, const Tensor &dnormed, float *out) {
            const ResidualReadPoint &at = m->layout.reads[size_t(r)];
            if (!at.norm) {
                std::copy_n(dnormed.data(), width, out);
                return;
            }
            const BlockWeights &b = m->block(g.receivers[size_t(r)].layer);
            const Tensor &x = trace.tensor(at.stream), &w = b.normWeight(*at.norm);
            Tensor dx({T, D}), dw(w.shape());
            if (c.norm == NormKind::RmsNorm) {
                ops::rmsnorm_backward(dx, dw, dnormed, x, normScale(w, c), c.lnEpsilon);
            } else {
                Tensor db(w.shape());
                ops::layernorm_backward(dx, dw, db, dnormed, x, w, c.lnEpsilon);
            }
            std::copy_n(dx.data(), width, out);
        };
        BackwardPass::Taps taps;
        taps.attentionHeads = [&](int layer, const Tensor &dq, const Tensor &dk, const Tensor &dv) {
            const Tensor *heads[3] = {&dq, &dk, &dv};
            const ReadPort ports[3] = {ReadPort::Query, ReadPort::Key, ReadPort::Value};
            const int group = c.queriesPerKv();
            std::vector<int> receivers;
            Tensor gradients({int64_t(c.heads + 2 * c.kvHeadCount()), width});
            for (int which = 0; which < 3; ++which) {
                const int count = which == 0 ? c.heads : c.kvHeadCount();
                for (int h = 0; h < count; ++h) {
                    Tensor dhead({T, d});
                    for (int q = 0; q < c.heads; ++q)
                        if ((which == 0 ? q : q / group) == h)
                            dhead.matrix() += heads[which]->slice(q);
                    Tensor dnormed({T, D});
                    projectHeadBackward(dnormed, dhead, c, m->block(layer), which, h);
                    const int r = g.findReceiver(ports[which], layer, h);
                    normBackward(r, dnormed, gradients.data() + int64_t(receivers.size()) * width);
                    receivers.push_back(r);
                }
            }
            score(receivers, gradients);
        };
        taps.feedForwardInput = [&](int layer, const Tensor &dnormed) {
            const int r = g.findReceiver(ReadPort::Mlp, layer, -1);
            Tensor gradient({1, width});
            normBackward(r, dnormed, gradient.data());
            score({r}, gradient);
        };
        pass.setTaps(taps);
        Tensor dx = pass.outputHead(std::move(dlogits));
        Tensor logitsGradient({1, width});
        std::copy_n(dx.data(), width, logitsGradient.data());
        score({int(g.receivers.size()) - 1}, logitsGradient);
        for (int l = c.layers - 1; l >= 0; --l)
            dx = pass.block(l, dx);
        ++result.backwardPasses;
    }
    if (progress)
        progress(steps, steps);
    return result;
}

double rankCorrelation(const std::vector<double> &a, const std::vector<double> &b)
{
    if (a.size() != b.size() || a.size() < 2)
        throw Error(
            "rank correlation: lists of " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + " values");
    const auto ranks = [](const std::vector<double> &v) {
        std::vector<size_t> order(v.size());
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](size_t i, size_t j) { return v[i] < v[j]; });
        std::vector<double> rank(v.size());
        for (size_t i = 0; i < order.size();) {
            size_t j = i;
            while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
                ++j;
            for (size_t k = i; k <= j; ++k)
                rank[order[k]] = 0.5 * double(i + j);
            i = j + 1;
        }
        return rank;
    };
    const std::vector<double> x = ranks(a), y = ranks(b);
    const double n = double(x.size()), mean = (n - 1) / 2;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mean) * (y[i] - mean);
        sxx += (x[i] - mean) * (x[i] - mean);
        syy += (y[i] - mean) * (y[i] - mean);
    }
    if (sxx == 0 || syy == 0)
        return std::numeric_limits<double>::quiet_NaN();
    return sxy / std::sqrt(sxx * syy);
}

} // namespace atlas
