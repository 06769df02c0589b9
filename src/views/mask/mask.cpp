#include "view/viewkinds.h"

// The Mask view (scores, mask and probabilities side by side): its descriptor.
namespace atlas::views::mask {

ViewKind kind()
{
    return {.kind = "mask",
        .title = "Mask",
        .summary = "scores, mask and probabilities side by side",
        .group = "Attention",
        .needs = ViewNeeds::LayerScores,
        .showsSites = true,
        .showsEncoderDecoder = true,
        .alsoReads = {"scale"},
        .after = "lines"};
}

} // namespace atlas::views::mask
