#pragma once

#include "funnel/funnelresolution.h"
#include "view/viewanalysis.h"

namespace atlas {

// Funnel (funnel/funnelresolution.h): the input's sequence at every layer and one head's attention at its
// resolution, and the held-out scores of the spec's model and of `baseline_model` when given.
struct FunnelAnalysis : ViewAnalysis
{
    static constexpr int kExamples = 64; // held-out examples per model
    FunnelPicture picture;
    std::vector<HeldOutScore> scores; // the spec's model first; a model without a task is left out
};

} // namespace atlas
