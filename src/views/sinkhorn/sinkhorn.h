#pragma once

#include "sinkhorn/sinkhornsort.h"
#include "view/viewanalysis.h"

namespace atlas {

// Sinkhorn (sinkhorn/sinkhornsort.h): the chosen layer's sort and head's attention on the input, and the held-out
// scores of the spec's model and of `baseline_model` when given.
struct SinkhornAnalysis : ViewAnalysis
{
    static constexpr int kExamples = 64; // held-out examples per model
    SinkhornPicture picture;
    std::vector<HeldOutScore> scores; // the spec's model first; a model without a task is left out
    HeldOutScore sortOff; // the spec's model with the sort switched off (S = I: each block reads only itself)
};

} // namespace atlas
