#pragma once

#include "memory/memorytimeline.h"
#include "view/viewanalysis.h"

// What the memory views share: the training step under every strategy that the timeline and the computation graph
// both draw. Each view's own result is in its folder (src/views/memory*/, src/views/inversionerror/).
namespace atlas {

struct MemoryTimelineAnalysis : ViewAnalysis
{
    static constexpr int kMaxTokens = 4096; // three training steps (and three warm-ups) of the input
    int ffnChunks = 1; // as the spec asked
    MemoryTimeline timeline;
};

} // namespace atlas
