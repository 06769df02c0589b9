#pragma once

#include "view/viewanalysis.h"

// Internal to the core: each view's analysis request, named by its descriptor (view/viewkinds.cpp) and reached
// through analysisRequest(). A request checks what its view needs and says why it cannot run, or keys and packs the
// work for a worker thread.
namespace atlas::analysis {

// The input rerun with the spec's heads switched off (ablate_heads, ablation), the task scored both ways, and the
// importance of every head (computed once per model and mode, then reused while the user switches heads).
AnalysisRequest ablationRequest(const ViewSpec &spec, const AnalysisContext &context);
// Two runs side by side (view/comparisonrequest.cpp): run B, each side's own analysis, and A − B where asked.
AnalysisRequest comparisonRequest(const ViewSpec &spec, const AnalysisContext &context);
// The context an analysis of `run` reads (what the app's view input gives for the session's run).
AnalysisContext contextOf(const SpecRun &run);
// The analysis the spec's view needs on its own: analysisRequest without the comparison.
AnalysisRequest ownRequest(const ViewSpec &spec, const AnalysisContext &context);
// The memory views' analyses train real steps of a model: one step under every strategy (the timeline and the
// computation graph share it), the depth sweep, checkpointing every k, and reversible blocks' rebuild error.
AnalysisRequest timelineRequest(const ViewSpec &spec, const AnalysisContext &context);
AnalysisRequest depthRequest(const ViewSpec &spec, const AnalysisContext &context);
AnalysisRequest tradeoffRequest(const ViewSpec &spec, const AnalysisContext &context);
AnalysisRequest inversionRequest(const ViewSpec &spec, const AnalysisContext &context);

} // namespace atlas::analysis
