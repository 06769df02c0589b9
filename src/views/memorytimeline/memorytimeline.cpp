#include "memorytimeline/memorytimeline.h"

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
        .analysisKeys = {"checkpoint_every", "ffn_chunks"},
        .alsoReads = {"cursor"},
        .after = "steps",
        .keys = {{.field = kMemoryScope,
            .type = "string",
            .meaning = "memory timeline: `all` (every category stacked) or `activations` (stored, recomputed and "
                       "workspace only: the part the strategies change)",
            .choices = {"all", "activations"},
            .ownedByView = true}}};
}

} // namespace atlas::views::memorytimeline
