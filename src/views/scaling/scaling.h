#pragma once

#include "scaling/dotproductscaling.h"
#include "view/viewanalysis.h"

namespace atlas {

// The "Why √d" view's analysis: Var(q·k) of random vectors against d, and one head's own scores with and without the
// division.
struct ScalingAnalysis : ViewAnalysis
{
    static constexpr int kSamples = 4000; // random pairs per d
    int layer = 0, head = 0;
    std::vector<attention::DotProductVariance> random; // d = 1, 2, 4 … 1024 and the head's own d
    attention::HeadScaling measured; // the head's own q and k (exact softmax)
};

} // namespace atlas
