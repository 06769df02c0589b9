#pragma once

#include "norms/normcomparison.h"
#include "view/viewanalysis.h"

namespace atlas {

// The LayerNorm against BatchNorm view's analysis: both normalisations of one block's norm input.
struct NormsAnalysis : ViewAnalysis
{
    // Two T × D maps drawn cell by cell and a pass over the tokens per token: longer inputs are refused.
    static constexpr int kMaxTokens = 1024;
    NormComparison comparison;
};

} // namespace atlas
