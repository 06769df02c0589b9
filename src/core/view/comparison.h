#pragma once

#include "view/viewkinds.h"
#include "view/viewspec.h"

#include <string>
#include <vector>

// Two runs side by side (the spec's "compare"): run A is the spec's own; run B is the same spec with another model,
// text or attention kernel. Each side draws the spec's view with the same layer, head and position; the attention
// view can also draw A − B. The analysis that runs B is view/viewanalysis.h's ComparisonAnalysis.
namespace atlas {

enum class Side { A, B };

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
