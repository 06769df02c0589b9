#pragma once

#include "analysis/logitlens.h"
#include "view/viewanalysis.h"

namespace atlas {

// The logit lens: every traced stream read through the output head (analysis/logitlens.h).
struct LogitLensAnalysis : ViewAnalysis
{
    static constexpr int kTopK = 5; // tokens kept per cell for the hover
    std::string target; // the spec's, as asked
    LogitLens lens; // lens.target: the id it names, −1 none
};

} // namespace atlas
