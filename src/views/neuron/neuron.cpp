#include "view/viewkinds.h"

// The Neuron view (one query and one key, component by component): its descriptor.
namespace atlas::views::neuron {

ViewKind kind()
{
    return {.kind = "neuron",
        .title = "Neuron",
        .summary
        = "one query and one key: q, k and q\u2218k component by component, the score as their sum over \u221Ad",
        .group = "Attention",
        .showsSites = true,
        .showsEncoderDecoder = true,
        .after = "qk-norm"};
}

} // namespace atlas::views::neuron
