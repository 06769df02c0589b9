#include "view/viewkinds.h"

// The Next token view: its descriptor.
namespace atlas::views::nexttoken {

ViewKind kind()
{
    return {.kind = "next-token",
        .title = "Next token",
        .summary = "the next-token distribution",
        .group = "Inside the model",
        .needs = ViewNeeds::NextProbs,
        .showsEncoderDecoder = true,
        .after = "architecture"};
}

} // namespace atlas::views::nexttoken
