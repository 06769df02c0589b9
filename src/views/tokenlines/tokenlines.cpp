#include "view/viewkinds.h"

// The Token lines view: its descriptor.
namespace atlas::views::tokenlines {

ViewKind kind()
{
    return {.kind = "lines",
        .title = "Token lines",
        .summary = "token-to-token lines of one head or all heads",
        .group = "Attention",
        .needs = ViewNeeds::LayerProbs,
        .showsSites = true,
        .showsEncoderDecoder = true,
        .everyHead = true,
        .after = "heads"};
}

} // namespace atlas::views::tokenlines
