#pragma once

#include "analysis/ffnsparsity.h"
#include "view/viewanalysis.h"

namespace atlas {

struct SparseFfnAnalysis : ViewAnalysis
{
    FfnSparsity sparsity;
};

} // namespace atlas
