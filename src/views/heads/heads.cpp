#include "view/viewkinds.h"

// The All heads view (every layer × head at once): its descriptor.
namespace atlas::views::heads {

ViewKind kind()
{
    return {.kind = "heads",
        .title = "All heads",
        .summary = "every layer × head at once",
        .group = "Attention",
        .needs = ViewNeeds::FirstLayerProbs,
        .showsSites = true,
        .showsEncoderDecoder = true,
        .everyHead = true,
        .after = "attention"};
}

} // namespace atlas::views::heads
