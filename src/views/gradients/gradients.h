#pragma once

#include "gradients/gradientdepth.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// The Gradients by depth view's analysis: the spec's model as trained and at initialisation, then `baseline_model`'s
// two when given, each measured on the spec's text (gradients/gradientdepth.h).
struct GradientsAnalysis : ViewAnalysis
{
    std::vector<GradientDepth> runs;
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::gradients {

inline const OwnKey<std::string> kInit {"init", "family"};
inline const OwnKey<int> kFreshBlocks {"fresh_blocks", 0};

} // namespace atlas::views::gradients
