#pragma once

#include "analysis/tokenizercomparison.h"
#include "view/viewanalysis.h"

namespace atlas {

// The Tokenizer view: the input split by the model's tokenizer and by spec.compareTokenizer.
struct TokenizerAnalysis : ViewAnalysis
{
    TokenizerComparison comparison;
};

} // namespace atlas
