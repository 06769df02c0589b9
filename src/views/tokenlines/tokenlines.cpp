#include "tokenlines/tokenlines.h"

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
        .alsoReads = {"position"},
        .after = "heads",
        .keys = {{.field = kHiddenHeads,
            .type = "array of ints",
            .meaning = "lines view with every head (`head` −1): the heads switched off, each toggled by clicking its "
                       "swatch (BertViz's head view)",
            .ownedByView = true,
            .perModel = true}}};
}

} // namespace atlas::views::tokenlines
