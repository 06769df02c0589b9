#pragma once

#include "memory/inversionerror.h"
#include "view/memoryanalysis.h"

namespace atlas {

// The Inversion error view's result: every block's rebuild error in each precision of the streams.
struct InversionErrorAnalysis : ViewAnalysis
{
    static constexpr int kMaxTokens = 2048;
    int tokens = 0, depth = 0;
    bool ownWeights = false; // the model's trained weights, or a random reversible model of its shape
    std::vector<InversionError> errors; // float64, float32, float16, bfloat16
};

} // namespace atlas
