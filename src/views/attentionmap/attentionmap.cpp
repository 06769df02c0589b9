#include "view/viewkinds.h"

// The Attention view (one head's attention weights as a heat map): its descriptor.
namespace atlas::views::attentionmap {

ViewKind kind()
{
    return {.kind = "attention",
        .title = "Attention",
        .summary = "one head's attention weights as a heat map",
        .group = "Attention",
        .needs = ViewNeeds::LayerProbs,
        .showsSites = true,
        .showsEncoderDecoder = true,
        .drawsDifference = true};
}

} // namespace atlas::views::attentionmap
