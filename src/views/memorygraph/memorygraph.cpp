#include "view/memoryrequests.h"
#include "view/viewkinds.h"

// The Computation graph view (which layers are computing, kept, freed or recomputed): its descriptor. It draws the
// timeline's analysis.
namespace atlas::views::memorygraph {

ViewKind kind()
{
    return {.kind = "memory-graph",
        .title = "Computation graph",
        .summary = "the layers as a chain: which are computing, kept, freed or recomputed at each op of the step",
        .group = "Memory",
        .showsEncoderDecoder = true,
        .request = analysis::timelineRequest,
        .analysisKeys = {"checkpoint_every", "ffn_chunks"},
        .alsoReads = {"cursor"},
        .after = "memory-timeline"};
}

} // namespace atlas::views::memorygraph
