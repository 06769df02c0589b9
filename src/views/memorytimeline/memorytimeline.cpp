#include "view/memoryrequests.h"
#include "view/viewkinds.h"

// The Memory timeline view (one training step's live memory under each strategy): its descriptor.
namespace atlas::views::memorytimeline {

ViewKind kind()
{
    return {.kind = "memory-timeline",
        .title = "Memory timeline",
        .summary = "one training step's live memory under plain backprop, checkpointing and reversible blocks",
        .group = "Memory",
        .showsEncoderDecoder = true,
        .request = analysis::timelineRequest,
        .after = "sinkhorn"};
}

} // namespace atlas::views::memorytimeline
