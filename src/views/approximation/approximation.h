#pragma once

#include "attention/approximationsweep.h"
#include "view/viewanalysis.h"

namespace atlas {

struct ApproximationAnalysis : ViewAnalysis
{
    static constexpr int kSeeds = 5;
    int layer = 0, head = 0;
    attention::ApproximationSweep sweep;
};

} // namespace atlas
