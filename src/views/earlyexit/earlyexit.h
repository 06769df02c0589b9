#pragma once

#include "analysis/earlyexit.h"
#include "view/viewanalysis.h"

namespace atlas {

struct EarlyExitAnalysis : ViewAnalysis
{
    EarlyExit exit;
};

} // namespace atlas
