#pragma once

#include "analysis/ffnsparsity.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

struct SparseFfnAnalysis : ViewAnalysis
{
    FfnSparsity sparsity;
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::sparseffn {

inline const OwnKey<int> kBlockSize {"block_size", 8};

} // namespace atlas::views::sparseffn
