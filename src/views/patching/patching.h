#pragma once

#include "analysis/activationpatching.h"
#include "view/corruptionkeys.h"
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

// This view's own spec keys (documented by its descriptor's `keys`); the corrupted run's are shared with the Circuit
// view (view/corruptionkeys.h).
namespace atlas::views::patching {

using corruptionkeys::kContrast;
using corruptionkeys::kCorruptedText;
using corruptionkeys::kNoisePositions;

inline const OwnKey<std::string> kPatch {"patch", "residual"};

} // namespace atlas::views::patching
