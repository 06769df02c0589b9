#pragma once

#include "analysis/tokenizercomparison.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// The Tokenizer view: the input split by the model's tokenizer and by spec.get(views::tokenizer::kCompareTokenizer).
struct TokenizerAnalysis : ViewAnalysis
{
    TokenizerComparison comparison;
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::tokenizer {

inline const OwnKey<std::string> kCompareTokenizer {"compare_tokenizer", "bert-base-uncased"};

} // namespace atlas::views::tokenizer
