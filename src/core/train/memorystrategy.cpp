#include "train/memorystrategy.h"

#include "model/model.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace atlas {

const std::vector<std::string> &memoryStrategyNames()
{
    static const std::vector<std::string> names = {"plain", "checkpoint", "reversible"};
    return names;
}

std::string memoryStrategyName(MemoryStrategy strategy)
{
    return memoryStrategyNames()[size_t(strategy)];
}

MemoryStrategy parseMemoryStrategy(const std::string &text, const std::string &field)
{
    for (size_t i = 0; i < memoryStrategyNames().size(); ++i)
        if (memoryStrategyNames()[i] == text)
            return MemoryStrategy(i);
    throw Error(field + ": unknown memory strategy '" + text + "' (expected plain, checkpoint or reversible)");
}

int checkpointInterval(const MemoryOptions &options, int layers)
{
    if (options.checkpointEvery > 0)
        return options.checkpointEvery;
    return std::max(1, int(std::ceil(std::sqrt(double(layers)) - 1e-9)));
}

void validateMemoryOptions(
    const MemoryOptions &options, const ModelConfig &config, int tokens, const MemoryOptionFields &fields)
{
    if (options.strategy == MemoryStrategy::Reversible && !config.reversible)
        throw Error(fields.strategy + " reversible: this model has standard blocks, whose inputs cannot be rebuilt "
            + "from their outputs (open a reversible model such as reverse-rev, train one with train --reversible, or "
              "use plain or checkpoint)");
    if (options.checkpointEvery < 0 || options.checkpointEvery > config.layers)
        throw Error(fields.checkpointEvery + " " + std::to_string(options.checkpointEvery) + ": must be in 1.."
            + std::to_string(config.layers) + " (the model has " + std::to_string(config.layers)
            + " layers), or 0 for ⌈√L⌉");
    bool dense = false;
    for (int i = 0; i < config.layers; ++i)
        dense = dense || !config.isMoeLayer(i);
    if (options.ffnChunks > 1 && !dense)
        throw Error(fields.ffnChunks + " " + std::to_string(options.ffnChunks)
            + ": every feed-forward of this model is a mixture of experts, which runs each expert on its own tokens; "
              "chunks apply to a dense feed-forward (use 1)");
    if (options.ffnChunks < 1 || (tokens > 0 && options.ffnChunks > tokens))
        throw Error(fields.ffnChunks + " " + std::to_string(options.ffnChunks) + ": must be in 1.."
            + (tokens > 0 ? std::to_string(tokens) + " (the input has " + std::to_string(tokens) + " tokens)"
                          : std::string("the input's length")));
}

namespace {

int64_t ceilDiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

// What one block's backward pass reads, in float32 bytes, on T tokens; with S > 0 a decoder block's cross-attention
// over S source tokens adds ln_cross, Q, the merged heads and mid_cross (4TD), K and V (2SD) and the weights (HTS).
int64_t blockBytes(const ModelConfig &c, int64_t T, const MemoryOptions &options, int64_t S)
{
    const int64_t D = c.dModel, F = c.dFF, H = c.heads;
    const int64_t rotated = c.rotatesQueriesAndKeys() ? 2 * T * D : 0, ffn = c.gatedFfn ? 3 * T * F : 2 * T * F;
    const int64_t qkNormed
        = c.qkNorm != QkNorm::None ? 2 * T * c.innerDim() : 0; // QK-norm's normalised Q and K, H·d wide
    // The weights, the span mask its gradient reads, and the soft-capped scores the cap's gradient reads.
    const int64_t maps = H * T * T * (1 + (c.adaptiveSpan() ? 1 : 0) + (c.attentionSoftcap > 0 ? 1 : 0));
    const int64_t cross = S > 0 ? 4 * T * D + 2 * S * D + H * T * S : 0;
    // Gemma 2's sandwich also normalises each sub-layer's output: the norms read attn.out and mlp.down.
    const int64_t sandwich = c.layerNorm == LayerNormPlacement::Sandwich ? 2 * T * D : 0;
    return int64_t(sizeof(float))
        * (8 * T * D + rotated + qkNormed + sandwich + (options.ffnChunks > 1 ? 0 : ffn) + maps + cross);
}

} // namespace

int64_t predictedActivationBytes(const ModelConfig &c, int tokens, const MemoryOptions &options, int sourceTokens)
{
    const int64_t T = tokens, D = c.dModel, V = c.vocab, L = c.layers, f = sizeof(float);
    const bool twoStacks = c.isEncoderDecoder();
    const int64_t S = twoStacks ? sourceTokens : 0, E = twoStacks ? c.encoderLayers : 0;
    const int64_t block = blockBytes(c, T, options, S), encoderBlock = twoStacks ? blockBytes(c, S, options, 0) : 0;
    const int64_t head = f * (2 * T * D + 2 * T * V);
    const int64_t tail = f * 2 * S * D; // the encoder's last stream and its output Z
    const int64_t stream = f * T * D * (c.reversible ? 2 : 1);
    switch (options.strategy) {
    case MemoryStrategy::Plain:
        return L * block + E * encoderBlock + tail + head;
    case MemoryStrategy::Checkpoint: {
        const int64_t k = std::min<int64_t>(checkpointInterval(options, int(L)), L);
        if (!twoStacks)
            return ceilDiv(L, k) * stream + k * block + head;
        const int64_t kE = std::min<int64_t>(checkpointInterval(options, int(E)), E);
        return ceilDiv(L, k) * stream + ceilDiv(E, kE) * f * S * D + std::max(k * block, kE * encoderBlock) + tail
            + head;
    }
    case MemoryStrategy::Reversible:
        return 2 * f * T * D + block + head;
    }
    return 0;
}

double estimatedTrainingStepBytes(const ModelConfig &c, int tokens, const MemoryOptions &options, int sourceTokens)
{
    const double T = tokens, D = c.dModel, F = c.dFF, H = c.heads, V = c.vocab, L = c.layers, f = sizeof(float);
    const double S = c.isEncoderDecoder() ? sourceTokens : 0, E = c.isEncoderDecoder() ? c.encoderLayers : 0;
    // predictedActivationBytes's plain count in double, an upper bound of the other strategies' counts that cannot
    // wrap; the strategies' own count where it is smaller and representable
    const double span = c.adaptiveSpan() ? 2 : 1;
    const double plain
        = L * f * (10 * T * D + 3 * T * F + H * T * T * span + (S > 0 ? 4 * T * D + 2 * S * D + H * T * S : 0))
        + E * f * (10 * S * D + 3 * S * F + H * S * S * span) + f * 2 * S * D + f * (2 * T * D + 2 * T * V);
    const double activations
        = plain < 1e18 ? double(predictedActivationBytes(c, tokens, options, sourceTokens)) : plain;
    return 16.0 * double(Model::parameterCountOf(c)) + activations;
}

} // namespace atlas
