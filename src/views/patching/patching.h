#pragma once

#include "analysis/activationpatching.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// Activation patching of the input against its corruption (analysis/activationpatching.h).
struct PatchingAnalysis : ViewAnalysis
{
    int target = 0, contrast = -1;
    PatchingResult result;
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::patching {

inline const OwnKey<std::string> kPatch {"patch", "residual"};
inline const OwnKey<std::string> kCorruptedText {"corrupted_text", ""};
inline const OwnKey<std::vector<int>> kNoisePositions {"noise_positions", {}};
inline const OwnKey<std::string> kContrast {"contrast", ""};

} // namespace atlas::views::patching
