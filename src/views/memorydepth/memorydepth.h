#pragma once

#include "memory/memorysweep.h"
#include "view/memoryanalysis.h"

namespace atlas {

// The Peak vs depth view's result: random-weight models of the input model's shape at each depth, trained one step
// of T random tokens each.
struct MemoryDepthAnalysis : ViewAnalysis
{
    static constexpr int kMaxTokens = 1024;
    int tokens = 0, maxDepth = 0;
    std::vector<SweepPoint> points; // depths 1, 2, 4 … maxDepth, each under plain, checkpoint, reversible
    DepthFit plain, checkpoint, reversible; // peak activation bytes against L, √L and 1
    std::string withoutReversible; // why the shape has no reversible points (memory/memorysweep.h), or empty
};

} // namespace atlas
