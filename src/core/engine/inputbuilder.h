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

// An encoder–decoder's decoder input from explicit ids (as given) or text: the text's tokens without the tokenizer's
// post-processing (no </s> after it), after `startToken` when the model has one (T5's decoder_start_token_id: the
// decoder reads the target shifted right). Throws atlas::Error when the text cannot be encoded.
std::vector<int> decoderInput(
    const Tokenizer &tokenizer, const std::string &text, const std::vector<int> &tokens, int startToken);

// Input::attention for a model of `layerCount` layers: `spec` in the listed layers (every layer when `layers` is
// empty), exact attention in the others; empty when spec is full attention. Throws atlas::Error for a layer
// outside the model or listed twice.
std::vector<attention::AttentionKernelSpec> attentionPerLayer(
    const attention::AttentionKernelSpec &spec, const std::vector<int> &layers, int layerCount);

} // namespace atlas
