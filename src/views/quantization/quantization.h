#pragma once

#include "quantization/quantizationeffect.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// The Quantization view's analysis: what storing one layer's matrices in fewer bits does.
struct QuantizationAnalysis : ViewAnalysis
{
    QuantizationEffect effect;
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::quantization {

inline const OwnKey<std::string> kType {"quant_type", "q4_0"};
inline const OwnKey<std::string> kMatrix {"quant_matrix", "q"};
inline const OwnKey<int> kBlock {"quant_block", 0};
inline const OwnKey<std::string> kReference {"quant_reference", ""};

} // namespace atlas::views::quantization
