#pragma once

#include "engine/program.h"
#include "model/model.h"
#include "trace/trace.h"
#include "util/workbudget.h"
#include "view/comparison.h"
#include "view/specrun.h"
#include "view/viewspec.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

// Some views show more than the trace holds: one head rerun under every kernel (kernels), an approximation
// swept over its size (approximation), a head's LSH buckets analysed (lsh), a sparse pattern enumerated
// (pattern). That work is an analysis: the core computes it from the trace and the spec, the session runs it
// off the GUI thread (render runs it in place), and the view only draws the result. See docs/architecture.md.
namespace atlas {

// The result of an analysis. Each view kind that needs one has its own type, in its folder (src/views/NAME/NAME.h).
struct ViewAnalysis
{
    virtual ~ViewAnalysis() = default;
    double milliseconds = 0; // how long the analysis took (shown by the views that time it)
};

// Two runs side by side (view/comparison.h): run B made from the spec, and each side's own analysis of the view.
struct ComparisonAnalysis : ViewAnalysis
{
    ViewSpec b; // the spec side B draws (sideSpec)
    SpecRun run; // B, run to the spec's op
    std::shared_ptr<const Tokenizer> tokenizer; // B's model's, for its labels
    std::shared_ptr<const ViewAnalysis> ownA, ownB; // each side's analysis of the view; null: none, or problemA/B
    std::string problemA, problemB;
    std::string settingsA, settingsB; // what each side's analysis was made for (AnalysisRequest::settings)
    // "difference": the layer and head's attention probabilities of each run and A − B, [rows, cols] row-major; empty
    // when differenceProblem says why (shapes that differ, a tensor A has not computed yet).
    int rows = 0, cols = 0;
    std::vector<float> probsA, probsB, difference;
    std::vector<float> maskedInBoth; // −∞ where both runs mask the cell, else 0; empty when a run has no mask traced
    std::string differenceProblem;
    // "heads": every head and the next token, A against B (view/comparison.h's headsCompared).
    HeadsCompared heads;
};

// What an analysis reads besides the spec.
struct AnalysisContext
{
    std::shared_ptr<const Trace> trace;
    std::shared_ptr<const Program> program;
    int tokens = 0; // T of the input
    int layers = 0;
    bool causal = true;
    std::vector<int> padding;
    std::shared_ptr<const Model> model; // the model that ran (the memory timeline trains a step of it)
    std::vector<int> tokenIds; // the input's token ids
    names::AttentionSite site; // the attention the spec's view draws (viewSiteOf)
    std::vector<int> sourceIds, sourcePadding; // an encoder–decoder's source, whatever the site (else empty)
    // `lesson check`: every code path run on the least work, to find what fails rather than to show numbers (held-out
    // sweeps on kCheckExamples examples, timings measured once).
    bool checkOnly = false;
    static constexpr int kCheckExamples = 2;
    // What a heavy analysis may do before it is refused (util/workbudget.h).
    WorkBudget budget = WorkBudget::process();
    int heldOutExamples(int examples) const { return checkOnly ? kCheckExamples : examples; }
};

// How far a long analysis has come, written by its run on the worker and read by the window (activation patching:
// one step per patched forward pass).
struct AnalysisProgress
{
    std::atomic<int> done {0}, total {0};
};

// The analysis a spec's view needs, ready to run.
struct AnalysisRequest
{
    // What the result depends on: the request's name and the identity of what it reads of the run (the model, the
    // input, traced tensors), then the values of the spec keys it reads (ViewKind::analysisKeys). A request with the
    // key of the result on screen needs no new run. Empty when the view needs no analysis.
    std::string key;
    // The view and its values of those keys (analysisSettings): a view draws a result only when they are its spec's.
    std::string settings;
    // Why it cannot run (a tensor not computed yet, a head that does not exist, a layer without LSH): the view
    // shows this instead. When set, `run` is empty.
    std::string problem;
    // Computes the result; polls `cancel` between its parts and may then return early. Throws atlas::Error.
    std::function<std::shared_ptr<const ViewAnalysis>(const std::atomic<bool> &cancel)> run;
    // The traced tensors the run reads, kept alive so that the key's addresses cannot be reused while it stands.
    std::vector<Tensor> pinned;
    // Set by a run long enough to report its progress (null: the view says "computing…").
    std::shared_ptr<AnalysisProgress> progress;
    // The problem is the work's size against the context's budget: the app offers to run it anyway.
    bool overBudget = false;
};

// The request for spec.view on the context; an empty key for a view that needs no analysis.
AnalysisRequest analysisRequest(const ViewSpec &spec, const AnalysisContext &context);
// spec.view and the spec's values of the keys its analysis reads (ViewKind::analysisKeys), leaving out `leaveOut`: what
// a result was made for, beside the run.
std::string analysisSettings(const ViewSpec &spec, const std::vector<std::string> &leaveOut = {});
// Runs it at once (render, tests): the result, or nullptr with *problem set.
std::shared_ptr<const ViewAnalysis> runAnalysisNow(const AnalysisRequest &request, std::string *problem);

// What a view says before any model has run.
extern const char *const kNothingComputed;

// "Not computed yet: step to <op> in layer <i> (<name>)": the operation that produces `traceName`, from the
// program; or that the trace has no such tensor; or, with no program, that nothing was computed yet.
std::string notComputedText(const Program *program, const std::string &traceName);

} // namespace atlas
