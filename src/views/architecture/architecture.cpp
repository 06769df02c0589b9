#include "view/viewkinds.h"

// The Architecture view (the model's operations as a diagram): its descriptor.
namespace atlas::views::architecture {

ViewKind kind()
{
    return {.kind = "architecture",
        .title = "Architecture",
        .summary = "the model's operations as a diagram with their shapes; click one to step there",
        .group = "Model",
        .showsEncoderDecoder = true,
        .after = "ablation"};
}

} // namespace atlas::views::architecture
