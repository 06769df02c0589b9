#include "model/modeltokenizer.h"
#include "view/analysisrequests.h"

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

// Head `head`'s [T, S] probabilities out of a site's [H, T, S] tensor.
std::vector<float> headRows(const Tensor &probs, int head)
{
    const int64_t cells = probs.dim(1) * probs.dim(2);
    const float *first = probs.data() + head * cells;
    return {first, first + cells};
}

std::string shapeText(const Tensor &t)
{
    return std::to_string(t.dim(1)) + " × " + std::to_string(t.dim(2));
}

// A − B of the spec's layer and head: both runs' probabilities, or why they cannot be subtracted.
void fillDifference(
    ComparisonAnalysis &out, const ViewSpec &spec, const Tensor &a, const Tensor &maskedA, const Trace &traceB)
{
    const std::string name = names::attentionTensor(out.run.site, spec.layer, "probs");
    const TraceEntry *b = traceB.find(name);
    if (b == nullptr) {
        out.differenceProblem = "Run B has no " + name + ".";
        return;
    }
    if (a.rank() != 3 || b->tensor.rank() != 3 || spec.head < 0 || spec.head >= a.dim(0)
        || spec.head >= b->tensor.dim(0)) {
        out.differenceProblem = "A − B reads one head: choose a head both runs have.";
        return;
    }
    if (a.dim(1) != b->tensor.dim(1) || a.dim(2) != b->tensor.dim(2)) {
        out.differenceProblem = "A − B needs two runs of the same shape: A's attention is " + shapeText(a)
            + " (queries × keys), B's is " + shapeText(b->tensor)
            + ". Give B a text of as many tokens, or compare side by side.";
        return;
    }
    out.rows = int(a.dim(1));
    out.cols = int(a.dim(2));
    out.probsA = headRows(a, spec.head);
    out.probsB = headRows(b->tensor, spec.head);
    out.difference.resize(out.probsA.size());
    for (size_t i = 0; i < out.difference.size(); ++i)
        out.difference[i] = out.probsA[i] - out.probsB[i];
    const TraceEntry *maskedB = traceB.find(names::attentionTensor(out.run.site, spec.layer, "masked"));
    if (maskedA.shape() == a.shape() && maskedB && maskedB->tensor.shape() == b->tensor.shape()) {
        const std::vector<float> ma = headRows(maskedA, spec.head), mb = headRows(maskedB->tensor, spec.head);
        constexpr float kNegInf = -std::numeric_limits<float>::infinity();
        out.maskedInBoth.resize(ma.size());
        for (size_t i = 0; i < ma.size(); ++i)
            out.maskedInBoth[i] = ma[i] == kNegInf && mb[i] == kNegInf ? kNegInf : 0.0f;
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
    Tensor probsA, maskedA;
    if (spec.compare == "difference") {
        const std::string name = names::attentionTensor(c.site, spec.layer, "probs");
        const TraceEntry *entry = c.trace->find(name);
        if (entry == nullptr)
            return problem(notComputedText(c.program.get(), name));
        probsA = entry->tensor;
        r.key += "/probs" + identity(probsA);
        r.pinned.push_back(probsA);
        if (const TraceEntry *masked = c.trace->find(names::attentionTensor(c.site, spec.layer, "masked"))) {
            maskedA = masked->tensor;
            r.key += identity(maskedA);
            r.pinned.push_back(maskedA);
        }
    }
    std::shared_ptr<const Trace> traceA;
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
    r.run = [spec, b, own = std::move(own), model = sameModel ? c.model : nullptr, probsA, maskedA, traceA,
                site = c.site, layers = c.layers, checkOnly = c.checkOnly](const std::atomic<bool> &cancel) {
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
            fillDifference(*out, spec, probsA, maskedA, *out->run.trace);
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
