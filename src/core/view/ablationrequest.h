#pragma once

#include "view/viewanalysis.h"

// The ablation view's analysis: the input rerun with the spec's heads switched off (ablate_heads, ablation), the
// task scored both ways, and the importance of every head (computed once per model and mode, then reused while the
// user switches heads on and off).
namespace atlas {

AnalysisRequest ablationRequest(const ViewSpec &spec, const AnalysisContext &context);

} // namespace atlas
