#pragma once

#include "engine/input.h"

#include <string>
#include <vector>

namespace atlas {

class Tokenizer;

// The engine input for a model from either explicit ids or text (encoded with the model's tokenizer),
// plus padding positions. Throws atlas::Error when the text cannot be encoded.
Input makeInput(const Tokenizer &tokenizer, const std::string &text, const std::vector<int> &tokens,
    const std::vector<int> &padding);

// Input::attention for a model of `layerCount` layers: `spec` in the listed layers (every layer when `layers` is
// empty), exact attention in the others; empty when spec is full attention. Throws atlas::Error for a layer
// outside the model or listed twice.
std::vector<attention::AttentionKernelSpec> attentionPerLayer(
    const attention::AttentionKernelSpec &spec, const std::vector<int> &layers, int layerCount);

} // namespace atlas
