#include "view/viewkinds.h"

// The Tensor view (any traced tensor): its descriptor.
namespace atlas::views::tracedtensor {

ViewKind kind()
{
    return {.kind = "tensor",
        .title = "Tensor",
        .summary = "any traced tensor",
        .group = "Model",
        .needs = ViewNeeds::SpecTensor,
        .showsEncoderDecoder = true,
        .alsoReads = {"tensor", "scale"},
        .after = "tokenizer"};
}

} // namespace atlas::views::tracedtensor
