#pragma once

#include "memory/memorytimeline.h"
#include "view/viewanalysis.h"

// What the memory views share: the training step under every strategy that the timeline and the computation graph
// both draw, and what a sweep's result was asked with. Each view's own result is in its folder (src/views/memory*/,
// src/views/inversionerror/).
namespace atlas {

struct MemoryTimelineAnalysis : ViewAnalysis
{
    static constexpr int kMaxTokens = 4096; // three training steps (and three warm-ups) of the input
    int checkpointEvery = 0, ffnChunks = 1; // as the spec asked
    MemoryTimeline timeline;
};

// What a memory view's result was asked with (a view drawing an older result knows to wait for the new one).
struct MemorySweepRequest
{
    int depth = 0, ffnChunks = 1; // the spec's
    bool operator==(const MemorySweepRequest &) const = default;
};

} // namespace atlas
