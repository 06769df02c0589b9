#include "model/modeltokenizer.h"
#include "view/analysisrequests.h"

#include "engine/attentiontrace.h"
#include "tokenize/tokenizer.h"
#include "trace/names.h"
#include "util/error.h"
#include "util/memorycheck.h"
#include "view/analysishelpers.h"
#include "view/comparison.h"
#include "view/specrun.h"

#include <limits>
#include <mutex>
#include <optional>

namespace atlas {

namespace {

using namespace atlas::analysis;

// The most cells of one head A − B computes: at 4096 tokens its six [T, T] arrays (each run's probabilities and mask,
// the difference and the cells both mask) take 400 MB.
constexpr int64_t kDifferenceCells = int64_t(4096) * 4096;

// One head's probabilities and masked scores, [rows, cols] row-major, from a run's trace: whole, or recomputed from a
// layer kept on demand; `problem` says why there are none.
struct HeadStages
{
    int64_t heads = 0, rows = 0, cols = 0;
    std::vector<float> probs, masked; // masked empty when the run keeps no mask
    std::string problem;
};

HeadStages headStages(const Trace &trace, const Model &model, const std::vector<int> &padding,
    const names::AttentionSite &site, int layer, int head, const std::string &run)
{
    HeadStages out;
    const std::optional<LayerAttention> layerAttention = LayerAttention::find(&model, padding, trace, site, layer);
    if (!layerAttention) {
        out.problem = run + " has no " + names::attentionTensor(site, layer, "probs") + ".";
        return out;
    }
    const LayerAttention &attention = *layerAttention;
    out.heads = attention.heads(), out.rows = attention.queries(), out.cols = attention.keys();
    if (head < 0 || head >= out.heads)
        return out;
    if (out.rows * out.cols > kDifferenceCells) {
        out.problem = "A − B holds a head whole, six arrays of " + std::to_string(out.rows) + " × "
            + std::to_string(out.cols) + " values (" + formatBytes(6.0 * double(out.rows * out.cols) * sizeof(float))
            + "), past the " + formatBytes(6.0 * double(kDifferenceCells) * sizeof(float))
            + " it computes. Compare side by side, or give both runs a shorter text.";
        return out;
    }
    std::vector<float> buffer;
    const auto whole = [&](ops::ScoreStage stage) {
        const float *first = attention.rows(stage, head, 0, out.rows, buffer);
        return std::vector<float>(first, first + out.rows * out.cols);
    };
    out.probs = whole(ops::ScoreStage::Probs);
    if (attention.has(ops::ScoreStage::Masked))
        out.masked = whole(ops::ScoreStage::Masked);
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

// The tensors A's attention at `layer` is read from: its whole probabilities and masked scores, or, for a layer kept on
// demand, the queries, keys and log-sum-exp its readout recomputes them from. The first must be traced.
std::vector<std::string> attentionReadFrom(const AnalysisContext &c, int layer)
{
    const std::string probs = names::attentionTensor(c.site, layer, "probs");
    if (c.trace->find(probs) || c.site.cross || c.site.stack != names::kOnlyStack
        || !AttentionReadout::find(*c.model, c.padding, *c.trace, layer))
        return {probs, names::attentionTensor(c.site, layer, "masked")};
    std::vector<std::string> read = readoutInputs(c.model->config, layer);
    read.push_back(names::layerTensor(layer, "attn.lse"));
    return read;
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
    AnalysisRequest own = compareMode(spec) == CompareMode::Heads ? AnalysisRequest {} : ownRequest(a, c);
    const bool sameModel = b.model == a.model && b.positions == a.positions;
    AnalysisRequest r;
    r.key = "compare/" + spec.compare + "/" + b.toJson() + "/A:" + own.key + "/" + own.problem
        + (sameModel ? modelIdentity(*c.model) : "");
    r.pinned = own.pinned;
    r.progress = own.progress;
    std::shared_ptr<const Trace> traceA;
    // A's attention is read on the worker from what its trace keeps of each layer the comparison reads.
    const auto readsLayer = [&](int layer) {
        const std::vector<std::string> read = attentionReadFrom(c, layer);
        if (!c.trace->find(read.front()))
            return false;
        for (const std::string &tensor : read)
            if (const TraceEntry *entry = c.trace->find(tensor)) {
                r.key += "/" + tensor + identity(entry->tensor);
                r.pinned.push_back(entry->tensor);
            }
        traceA = c.trace;
        return true;
    };
    if (compareMode(spec) == CompareMode::Difference && !readsLayer(spec.layer))
        return problem(notComputedText(c.program.get(), names::attentionTensor(c.site, spec.layer, "probs")));
    if (compareMode(spec) == CompareMode::Heads) { // every layer's attention and the logits of A, read when B has run
        for (int layer = 0; layer < c.layers; ++layer)
            if (!readsLayer(layer))
                return problem(notComputedText(c.program.get(), names::attentionTensor(c.site, layer, "probs")));
        if (const TraceEntry *logits = c.trace->find("logits")) {
            r.key += "/logits" + identity(logits->tensor);
            r.pinned.push_back(logits->tensor);
        }
        r.progress = std::make_shared<AnalysisProgress>(); // A and B's heads recomputed: seconds at long inputs
    }
    if (sameModel)
        r.pinned.push_back(c.model->wte);
    r.run = [spec, b, own = std::move(own), model = sameModel ? c.model : nullptr, modelA = c.model,
                programA = c.program, tokensA = c.tokenIds, paddingA = c.padding, traceA, site = c.site,
                layers = c.layers, progress = r.progress, checkOnly = c.checkOnly](const std::atomic<bool> &cancel) {
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
        const AnalysisRequest ownB
            = compareMode(spec) == CompareMode::Heads ? AnalysisRequest {} : ownRequest(b, contextB);
        out->settingsB = ownB.settings;
        runOwn(ownB, cancel, out->ownB, out->problemB);
        if (compareMode(spec) == CompareMode::Difference) {
            fillDifference(*out, spec, headStages(*traceA, *modelA, paddingA, site, spec.layer, spec.head, "Run A"),
                headStages(*out->run.trace, *out->run.model, out->run.input.padding, out->run.site, spec.layer,
                    spec.head, "Run B"));
            if (!out->differenceProblem.empty())
                throw Error(out->differenceProblem);
        }
        if (compareMode(spec) == CompareMode::Heads) {
            const ComparedRun a {traceA.get(), modelA.get(), programA.get(), {tokensA, paddingA}};
            const ComparedRun runB {out->run.trace.get(), out->run.model.get(), out->run.program.get(), out->run.input};
            out->heads = headsCompared(a, runB, site, layers, &cancel, progress.get());
        }
        out->milliseconds = millisecondsSince(start);
        const std::lock_guard<std::mutex> hold(last.lock);
        last.runKey = key;
        last.result = out;
        return std::shared_ptr<const ViewAnalysis>(out);
    };
    return r;
}

} // namespace atlas
