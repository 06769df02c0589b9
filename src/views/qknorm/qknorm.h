#pragma once

#include "qknorm/qknormeffect.h"
#include "view/viewanalysis.h"

namespace atlas {

// The QK-norm view's analysis: what QK-norm does to one layer's queries, keys and scores, every head.
struct QkNormAnalysis : ViewAnalysis
{
    QkNormEffect effect;
};

} // namespace atlas
