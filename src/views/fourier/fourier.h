#pragma once

#include "fourier/fouriermixing.h"
#include "view/viewanalysis.h"

namespace atlas {

// The Fourier mixing view's analysis: FNet's mixing of one block's attention input, beside a head of that block.
struct FourierMixingAnalysis : ViewAnalysis
{
    // T × T matrices are drawn three times over, cell by cell: longer inputs are refused.
    static constexpr int kMaxTokens = 1024;
    FourierMixing mixing;
};

} // namespace atlas
