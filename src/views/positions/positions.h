#pragma once

#include "positions/positionprofile.h"
#include "view/viewanalysis.h"

namespace atlas {

// The Positions view's analysis: the model's positional encoding at this input's length, and the chosen head's.
struct PositionsAnalysis : ViewAnalysis
{
    static constexpr int kMaxTokens = 2048; // the similarity is T × T
    int layer = 0, head = 0;
    PositionProfile profile;
};

} // namespace atlas
