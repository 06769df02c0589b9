#pragma once

#include "analysis/maskedfills.h"
#include "view/viewanalysis.h"

namespace atlas {

// The Masked fills view: what a masked LM names at each hidden position of the input (analysis/maskedfills.h).
struct FillsAnalysis : ViewAnalysis
{
    static constexpr int kMaxFills = 5; // fills listed per position (the spec's top_k, at most this)
    bool corrupted = false; // the input corrupted by the masked LM from `seed` (spec objective "mlm"), or as typed
    int seed = 0;
    MaskedFills fills;
};

} // namespace atlas
