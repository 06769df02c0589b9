#include "engine/inputbuilder.h"

#include "tokenize/tokenizer.h"
#include "util/error.h"

namespace atlas {

Input makeInput(const Tokenizer &tokenizer, const std::string &text, const std::vector<int> &tokens,
    const std::vector<int> &padding)
{
    Input input;
    input.tokens = tokens.empty() ? tokenizer.encodeWithSpecialTokens(text) : tokens;
    input.padding = padding;
    return input;
}

std::vector<int> decoderInput(
    const Tokenizer &tokenizer, const std::string &text, const std::vector<int> &tokens, int startToken)
{
    if (!tokens.empty())
        return tokens;
    if (startToken < 0)
        return tokenizer.encodeWithSpecialTokens(text);
    std::vector<int> ids = {startToken};
    for (const int id : tokenizer.encode(text))
        ids.push_back(id);
    return ids;
}

std::vector<attention::AttentionKernelSpec> attentionPerLayer(
    const attention::AttentionKernelSpec &spec, const std::vector<int> &layers, int layerCount)
{
    if (attention::isExactAttention(spec))
        return {};
    if (layers.empty())
        return {spec};
    std::vector<attention::AttentionKernelSpec> perLayer(static_cast<size_t>(layerCount)); // default: full
    std::vector<bool> listed(size_t(layerCount), false);
    for (int layer : layers) {
        if (layer < 0 || layer >= layerCount)
            throw Error("attention layers: layer " + std::to_string(layer) + " is not in the model (layers 0 to "
                + std::to_string(layerCount - 1) + ")");
        if (listed[size_t(layer)])
            throw Error("attention layers: layer " + std::to_string(layer) + " is listed twice");
        listed[size_t(layer)] = true;
        perLayer[size_t(layer)] = spec;
    }
    return perLayer;
}

} // namespace atlas
