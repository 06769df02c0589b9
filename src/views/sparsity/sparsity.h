#pragma once

#include "analysis/attentionsparsity.h"
#include "view/viewanalysis.h"

namespace atlas {

struct SparseAttentionAnalysis : ViewAnalysis
{
    AttentionSparsity sparsity;
};

} // namespace atlas
