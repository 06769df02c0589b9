#pragma once

#include "analysis/lostinthemiddle.h"
#include "view/viewanalysis.h"

namespace atlas {

// Lost in the middle (analysis/lostinthemiddle.h): the spec's model, and `baseline_model` when given, asked for each
// pair of held-out contexts in turn.
struct LostInTheMiddleAnalysis : ViewAnalysis
{
    static constexpr int kExamples = 100; // held-out contexts per asked position
    std::vector<RetrievalByPosition> sweeps; // the spec's model first
};

} // namespace atlas
