#pragma once

#include "analysis/expertrouting.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

struct ExpertsAnalysis : ViewAnalysis
{
    static constexpr int kMaxTokens = 4096; // the view routes the input through the whole model again
    ExpertRouting routing;
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::experts {

inline const OwnKey<double> kCapacityFactor {"capacity_factor", 0.0};
inline const OwnKey<int> kExpertTopK {"expert_top_k", 0};
inline const OwnKey<int> kDevices {"devices", 2};

} // namespace atlas::views::experts
