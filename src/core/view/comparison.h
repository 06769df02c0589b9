#pragma once

#include "engine/input.h"
#include "trace/names.h"
#include "view/viewkinds.h"
#include "view/viewspec.h"

#include <atomic>
#include <string>
#include <vector>

// Two runs side by side (the spec's "compare"): run A is the spec's own; run B is the same spec with another model,
// text or attention kernel. Each side draws the spec's view with the same layer, head and position; the attention
// view can also draw A − B. The analysis that runs B is view/viewanalysis.h's ComparisonAnalysis.
namespace atlas {

class Model;
struct Program;
class Trace;
struct AnalysisProgress;

enum class Side { A, B };

// The spec's "compare" key: one run, two side by side, the attention's A − B, or every head compared. The spec keeps
// the key's text (its JSON, the app's menus); the code asks this.
enum class CompareMode { None, Side, Difference, Heads };
CompareMode compareMode(const ViewSpec &spec);

// Two runs of inputs of one length compared head by head ("compare": "heads"): how far B's attention is from A's in
// every head, and B's next-token distributions from A's (two GGUF files of one model, F16 against Q4_K_M).
struct HeadsCompared
{
    int layers = 0, heads = 0;
    int queries = 0;
    // [layers × heads]: the mean over queries of the total variation ½ Σ_k |A_qk − B_qk|, 0 (the same) to 1 (no key
    // in common).
    std::vector<float> distance;
    // Per position: KL(A ‖ B) of the next-token distributions softmax(logits), in nats, and whether A's and B's most
    // likely tokens agree; empty when `nextTokenProblem` says why.
    std::vector<double> nextTokenKl;
    std::vector<char> sameTopToken;
    std::string nextTokenProblem;
};

// A run as headsCompared reads it: its trace, and what recomputes what the trace keeps on demand (attention from each
// layer's queries, keys and log-sum-exp, logits from the last stream); a trace alone when model and program are null.
struct ComparedRun
{
    const Trace *trace = nullptr;
    const Model *model = nullptr;
    const Program *program = nullptr;
    Input input; // the tokens and padding the run read
};

// The attention probabilities of `layers` layers at `site` and the logits of both runs, whole or recomputed a block of
// rows at a time; throws atlas::Error naming the tensor that is missing or whose shapes differ. Stops early, with what
// it has, when `cancel` is set; counts a step per layer and one for the logits in `progress`.
HeadsCompared headsCompared(const ComparedRun &a, const ComparedRun &b, const names::AttentionSite &site, int layers,
    const std::atomic<bool> *cancel = nullptr, AnalysisProgress *progress = nullptr);

// The spec one side draws: the comparison keys cleared, and for B compare_model, compare_text (replacing A's text,
// tokens and padding) and compare_attention with its parameters applied.
ViewSpec sideSpec(const ViewSpec &spec, Side side);

// An edit made on one side's view (a head clicked, a slider moved), as the comparison's new spec: the view settings
// the side changed, with each run's model, input and kernel and the comparison keys kept as they were.
ViewSpec comparisonEdit(const ViewSpec &comparison, const ViewSpec &edited, Side side);

// What a side's run is made of: the keys runSpec reads, as JSON. Two side specs with the same key draw from the same
// run; layer, head and the view's settings are left out, so a click on another head reuses it.
std::string runKeyOf(const ViewSpec &side);

// What run B changes, for captions: "model reverse-rope", "text “…”", "attention lsh (rounds=4)".
std::string comparedChange(const ViewSpec &spec);

// A kernel with its parameters, for captions: "longformer (window=2)", "full".
std::string kernelCaption(const std::string &kind, const std::vector<std::string> &params);

// Why the spec's comparison keys cannot be drawn (compare_* without compare, a comparison that changes nothing,
// a difference of a view that has none), naming the key; an empty `why` when they can.
SpecProblem comparisonProblem(const ViewSpec &spec);

} // namespace atlas
