#pragma once

#include "recurrence/rnnreach.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// The RNN vs attention view's analysis: an RNN run on a block's attention input beside that block's head.
struct RecurrenceAnalysis : ViewAnalysis
{
    // The RNN's states are run token by token and followed back with n × n products: longer inputs are refused.
    static constexpr int kMaxTokens = 4096;
    RecurrenceComparison comparison;
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::recurrence {

inline const OwnKey<double> kRnnRadius {"rnn_radius", 0.9};

} // namespace atlas::views::recurrence
