#pragma once

#include "memory/memorysweep.h"
#include "view/memoryanalysis.h"

namespace atlas {

// The Checkpoint k view's result: a random-weight model of the input model's shape, checkpointed every k blocks.
struct MemoryTradeoffAnalysis : ViewAnalysis
{
    static constexpr int kMaxTokens = 1024;
    int tokens = 0, depth = 0;
    int sqrtK = 0; // ⌈√L⌉, checkpointing's default
    std::vector<SweepPoint> points; // plain, checkpoint k = 1 … depth, reversible
    std::string withoutReversible; // why the shape has no reversible point, or empty
};

} // namespace atlas
