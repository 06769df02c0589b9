#pragma once

#include "attention/lshanalysis.h"
#include "view/viewanalysis.h"

namespace atlas {

struct LshAnalysis : ViewAnalysis
{
    int layer = 0, head = 0;
    attention::LshHeadAnalysis data;
};

} // namespace atlas
