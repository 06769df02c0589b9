#include "nexttoken/nexttoken.h"

#include "view/viewkinds.h"

// The Next token view: its descriptor.
namespace atlas::views::nexttoken {

ViewKind kind()
{
    return {.kind = "next-token",
        .title = "Next token",
        .summary = "the next-token distribution",
        .group = "Model",
        .needs = ViewNeeds::NextProbs,
        .showsEncoderDecoder = true,
        .alsoReads = {"top_k", "position"},
        .after = "architecture",
        .keys = {{.field = kTemperature,
                     .type = "number, 0 < T ≤ 100",
                     .meaning
                     = "the next-token view's bars are softmax(z / T), computed from the traced `next_probs` = "
                       "softmax(z) as p^(1/T) / Σ p^(1/T): below 1 sharpens, above 1 flattens; what sampling at that "
                       "temperature draws from",
                     .maximum = 100,
                     .ownedByView = true},
            {.field = kTopP,
                .type = "number, 0 < p ≤ 1",
                .meaning = "nucleus sampling's cut (engine/temperature.h's nucleusSize): the fewest most probable "
                           "tokens, after the temperature, whose probabilities sum to p are kept and renormalised, the "
                           "rest drawn greyed as cut; 1 cuts nothing",
                .maximum = 1,
                .ownedByView = true}}};
}

} // namespace atlas::views::nexttoken
