#pragma once

#include "gradients/gradientdepth.h"
#include "view/viewanalysis.h"

namespace atlas {

// The Gradients by depth view's analysis: the spec's model as trained and at initialisation, then `baseline_model`'s
// two when given, each measured on the spec's text (gradients/gradientdepth.h).
struct GradientsAnalysis : ViewAnalysis
{
    std::vector<GradientDepth> runs;
};

} // namespace atlas
