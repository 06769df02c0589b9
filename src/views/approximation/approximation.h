#pragma once

#include "attention/approximationsweep.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

struct ApproximationAnalysis : ViewAnalysis
{
    static constexpr int kSeeds = 5;
    int layer = 0, head = 0;
    attention::ApproximationSweep sweep;
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::approximation {

inline const OwnKey<std::string> kApproximation {"approximation", "linformer"};
inline const OwnKey<int> kApproximationValue {"approximation_value", 0};

} // namespace atlas::views::approximation
