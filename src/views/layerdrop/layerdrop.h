#pragma once

#include "analysis/layerdrop.h"
#include "view/viewanalysis.h"

namespace atlas {

// LayerDrop (analysis/layerdrop.h): the spec's model, and `baseline_model` when given, scored with blocks pruned.
struct LayerDropAnalysis : ViewAnalysis
{
    static constexpr int kExamples = 64; // held-out examples per depth and rule
    std::vector<DepthSweep> sweeps; // the spec's model first
};

} // namespace atlas
