#pragma once

#include "view/viewanalysis.h"

// Internal to the core: how analysisRequest() reaches a view's request (named by the descriptor in its folder,
// src/views/NAME/), and the comparison of two runs. A request checks what its view needs and says why it cannot run,
// or keys and packs the work for a worker thread.
namespace atlas::analysis {

// Two runs side by side (view/comparisonrequest.cpp): run B, each side's own analysis, and A − B where asked.
AnalysisRequest comparisonRequest(const ViewSpec &spec, const AnalysisContext &context);
// The context an analysis of `run` reads (what the app's view input gives for the session's run).
AnalysisContext contextOf(const SpecRun &run);
// The analysis the spec's view needs on its own: analysisRequest without the comparison.
AnalysisRequest ownRequest(const ViewSpec &spec, const AnalysisContext &context);

} // namespace atlas::analysis
