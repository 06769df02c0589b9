#include "model/modeltokenizer.h"
#include "view/analysisrequests.h"

#include "engine/attentiontrace.h"
#include "tokenize/tokenizer.h"
#include "trace/names.h"
#include "util/error.h"
#include "view/analysishelpers.h"
#include "view/comparison.h"
#include "view/specrun.h"

#include <limits>
#include <mutex>

namespace atlas {

namespace {

using namespace atlas::analysis;

// The most cells of one head A − B computes: at 4096 tokens its six [T, T] arrays (each run's probabilities and mask,
// the difference and the cells both mask) take 400 MB.
constexpr int64_t kDifferenceCells = int64_t(4096) * 4096;

// One head's probabilities and masked scores, [rows, cols] row-major, from a run's trace: its whole [H, T, S] tensors,
// or recomputed from a layer kept on demand (AttentionReadout); `problem` says why there are none.
struct HeadStages
{
    int64_t heads = 0, rows = 0, cols = 0;
    std::vector<float> probs, masked; // masked empty when the run keeps no mask
    std::string problem;
};

// Head `head`'s [T, S] cells of an [H, T, S] tensor (or the one head of a [T, S] one).
std::vector<float> headRows(const Tensor &t, int64_t head)
{
    const int64_t cells = t.dim(t.rank() - 2) * t.dim(t.rank() - 1);
    const float *first = t.data() + head * cells;
    return {first, first + cells};
}

HeadStages headStages(const Trace &trace, const Model &model, const std::vector<int> &padding,
    const names::AttentionSite &site, int layer, int head, const std::string &run)
{
    HeadStages out;
    const std::string name = names::attentionTensor(site, layer, "probs");
    const TraceEntry *probs = trace.find(name);
    const std::unique_ptr<AttentionReadout> readout = probs || site.cross || site.stack != names::kOnlyStack
        ? nullptr
        : AttentionReadout::find(model, padding, trace, layer);
    if (!probs && !readout) {
        out.problem = run + " has no " + name + ".";
        return out;
    }
    out.heads = probs ? probs->tensor.dim(0) : readout->heads();
    out.rows = probs ? probs->tensor.dim(1) : readout->queries();
    out.cols = probs ? probs->tensor.dim(2) : readout->keys();
    if (probs && probs->tensor.rank() != 3)
        out.problem = name + " is not [heads, queries, keys].";
    if (!out.problem.empty() || head < 0 || head >= out.heads)
        return out;
    if (out.rows * out.cols > kDifferenceCells) {
        out.problem = "A − B holds a head whole: " + std::to_string(out.rows) + " × " + std::to_string(out.cols)
            + " is past the " + std::to_string(kDifferenceCells) + " cells it computes. Compare side by side, or "
            + "give both runs a shorter text.";
        return out;
    }
    if (readout) {
        out.probs = headRows(readout->head(ops::ScoreStage::Probs, head), 0);
        out.masked = headRows(readout->head(ops::ScoreStage::Masked, head), 0);
        return out;
    }
    out.probs = headRows(probs->tensor, head);
    if (const TraceEntry *masked = trace.find(names::attentionTensor(site, layer, "masked"));
        masked && masked->tensor.shape() == probs->tensor.shape())
        out.masked = headRows(masked->tensor, head);
    return out;
}

std::string shapeText(const HeadStages &h)
{
    return std::to_string(h.rows) + " × " + std::to_string(h.cols);
}

// A − B of the spec's layer and head from both runs' stages, or why they cannot be subtracted.
void fillDifference(ComparisonAnalysis &out, const ViewSpec &spec, HeadStages a, HeadStages b)
{
    for (const HeadStages *side : {&a, &b})
        if (!side->problem.empty()) {
            out.differenceProblem = side->problem;
            return;
        }
    if (spec.head < 0 || spec.head >= a.heads || spec.head >= b.heads) {
        out.differenceProblem = "A − B reads one head: choose a head both runs have.";
        return;
    }
    if (a.rows != b.rows || a.cols != b.cols) {
        out.differenceProblem = "A − B needs two runs of the same shape: A's attention is " + shapeText(a)
            + " (queries × keys), B's is " + shapeText(b)
            + ". Give B a text of as many tokens, or compare side by side.";
        return;
    }
    out.rows = int(a.rows);
    out.cols = int(a.cols);
    out.probsA = std::move(a.probs);
    out.probsB = std::move(b.probs);
    out.difference.resize(out.probsA.size());
    for (size_t i = 0; i < out.difference.size(); ++i)
        out.difference[i] = out.probsA[i] - out.probsB[i];
    if (!a.masked.empty() && !b.masked.empty()) {
        constexpr float kNegInf = -std::numeric_limits<float>::infinity();
        out.maskedInBoth.resize(a.masked.size());
        for (size_t i = 0; i < a.masked.size(); ++i)
            out.maskedInBoth[i] = a.masked[i] == kNegInf && b.masked[i] == kNegInf ? kNegInf : 0.0f;
    }
}

// Runs a side's own analysis, or says why it has none.
void runOwn(const AnalysisRequest &request, const std::atomic<bool> &cancel,
    std::shared_ptr<const ViewAnalysis> &result, std::string &problem)
{
    if (!request.run) {
        problem = request.problem;
        return;
    }
    try {
        result = request.run(cancel);
    } catch (const std::exception &e) {
        problem = e.what();
    }
}

// The last comparison made, while something (the view on screen) holds it: its run B is reused when the next
// comparison's run is the same.
struct LastComparison
{
    std::mutex lock;
    std::string runKey;
    std::weak_ptr<const ComparisonAnalysis> result;
};

LastComparison &lastComparison()
{
    static LastComparison last;
    return last;
}

} // namespace

AnalysisContext analysis::contextOf(const SpecRun &run)
{
    const bool encoder = run.site.stack == names::kEncoderStack;
    AnalysisContext c;
    c.trace = run.trace;
    c.program = run.program;
    c.tokenIds = encoder ? run.input.source : run.input.tokens;
    c.tokens = int(c.tokenIds.size());
    c.layers = siteLayers(run.site, run.model->config);
    c.causal = run.model->config.causal && !encoder && !run.site.cross;
    c.padding = encoder ? run.input.sourcePadding : run.input.padding;
    c.model = run.model;
    c.site = run.site;
    c.sourceIds = run.input.source;
    c.sourcePadding = run.input.sourcePadding;
    return c;
}

// Run B is made and run inside the analysis, off the GUI thread: it can load another model. It reuses A's model when
// B names the same one. The key holds B's whole spec and A's own request, so stepping A reruns B only when A's own
// analysis (or, for the difference, A's tensor) changed.
AnalysisRequest analysis::comparisonRequest(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || !c.program)
        return problem(kNothingComputed);
    const ViewSpec a = sideSpec(spec, Side::A), b = sideSpec(spec, Side::B);
    // "heads" draws no side's view: neither side's own analysis is run.
    AnalysisRequest own = spec.compare == "heads" ? AnalysisRequest {} : ownRequest(a, c);
    const bool sameModel = b.model == a.model && b.positions == a.positions;
    AnalysisRequest r;
    r.key = "compare/" + spec.compare + "/" + b.toJson() + "/A:" + own.key + "/" + own.problem
        + (sameModel ? modelIdentity(*c.model) : "");
    r.pinned = own.pinned;
    r.progress = own.progress;
    std::shared_ptr<const Trace> traceA;
    if (spec.compare == "difference") { // A's head read on the worker from what its trace keeps of the layer
        const std::string name = names::attentionTensor(c.site, spec.layer, "probs");
        std::vector<std::string> read = {name, names::attentionTensor(c.site, spec.layer, "masked")};
        if (!c.trace->find(name) && !c.site.cross && c.site.stack == names::kOnlyStack
            && AttentionReadout::find(*c.model, c.padding, *c.trace, spec.layer)) {
            read = readoutInputs(c.model->config, spec.layer);
            read.push_back(names::layerTensor(spec.layer, "attn.lse"));
        }
        if (!c.trace->find(read.front()))
            return problem(notComputedText(c.program.get(), name));
        for (const std::string &tensor : read)
            if (const TraceEntry *entry = c.trace->find(tensor)) {
                r.key += "/" + tensor + identity(entry->tensor);
                r.pinned.push_back(entry->tensor);
            }
        traceA = c.trace;
    }
    if (spec.compare == "heads") { // every layer's attention and the logits of A, read when B has run
        for (int layer = 0; layer < c.layers; ++layer) {
            const std::string name = names::attentionTensor(c.site, layer, "probs");
            const TraceEntry *entry = c.trace->find(name);
            if (entry == nullptr)
                return problem(notComputedText(c.program.get(), name));
            r.key += "/" + identity(entry->tensor);
            r.pinned.push_back(entry->tensor);
        }
        if (const TraceEntry *logits = c.trace->find("logits")) {
            r.key += "/logits" + identity(logits->tensor);
            r.pinned.push_back(logits->tensor);
        }
        traceA = c.trace;
    }
    if (sameModel)
        r.pinned.push_back(c.model->wte);
    r.run = [spec, b, own = std::move(own), model = sameModel ? c.model : nullptr, modelA = c.model,
                paddingA = c.padding, traceA, site = c.site, layers = c.layers,
                checkOnly = c.checkOnly](const std::atomic<bool> &cancel) {
        const auto start = Clock::now();
        auto out = std::make_shared<ComparisonAnalysis>();
        out->b = b;
        out->settingsA = own.settings;
        runOwn(own, cancel, out->ownA, out->problemA);
        if (cancel)
            return std::shared_ptr<const ViewAnalysis>(out);
        const std::string key = runKeyOf(b);
        LastComparison &last = lastComparison();
        {
            const std::lock_guard<std::mutex> hold(last.lock);
            if (const auto previous = last.result.lock(); previous && last.runKey == key) {
                out->run = previous->run;
                out->tokenizer = previous->tokenizer;
            }
        }
        if (!out->run.trace) {
            out->run = runSpec(b, size_t(8) << 30, model);
            out->tokenizer = tokenizerForModel(*out->run.model);
        }
        if (const std::string why = drawProblem(b, out->run, "run B"); !why.empty())
            throw Error(why);
        AnalysisContext contextB = contextOf(out->run);
        contextB.checkOnly = checkOnly;
        const AnalysisRequest ownB = spec.compare == "heads" ? AnalysisRequest {} : ownRequest(b, contextB);
        out->settingsB = ownB.settings;
        runOwn(ownB, cancel, out->ownB, out->problemB);
        if (spec.compare == "difference") {
            fillDifference(*out, spec, headStages(*traceA, *modelA, paddingA, site, spec.layer, spec.head, "Run A"),
                headStages(*out->run.trace, *out->run.model, out->run.input.padding, out->run.site, spec.layer,
                    spec.head, "Run B"));
            if (!out->differenceProblem.empty())
                throw Error(out->differenceProblem);
        }
        if (spec.compare == "heads")
            out->heads = headsCompared(*traceA, *out->run.trace, site, layers);
        out->milliseconds = millisecondsSince(start);
        const std::lock_guard<std::mutex> hold(last.lock);
        last.runKey = key;
        last.result = out;
        return std::shared_ptr<const ViewAnalysis>(out);
    };
    return r;
}

} // namespace atlas
