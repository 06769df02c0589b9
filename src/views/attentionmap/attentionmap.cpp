#include "attentionmap/attentionmap.h"

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
        .drawsDifference = true,
        .alsoReads = {"scale", "query"},
        .keys = {{.field = kVeilQuery,
            .type = "bool",
            .meaning = "attention view: row `query` is covered (\"hidden until Reveal\") and its hover says nothing of "
                       "its weights. A lesson step with a predict question opens with it on, so the heat map does not "
                       "give the answer away; Reveal turns it off"}}};
}

} // namespace atlas::views::attentionmap
