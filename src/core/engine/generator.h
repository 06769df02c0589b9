#pragma once

#include "engine/input.h"
#include "model/blockrecipe.h"
#include "model/model.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace atlas {

struct SamplingOptions
{
    float temperature = 0.0f; // 0 = greedy (argmax)
    int topK = 0; // 0 = every token
    uint64_t seed = 0;
    double topP = 1.0; // nucleus sampling after top-k (engine/temperature.h's nucleusSize): 1 = every token
};

// A change made to one tensor of the run as each position passes it (steering, features/steering.h): `tensor` is its
// trace name, a block's input or one of its steps' outputs ("layer.3.out", "layer.2.mlp.down" …), and `change` edits
// the new position's row [1, D] in place. Every position gets it, the prompt's too, as a whole run's change of the
// tensor would give them.
struct StreamEdit
{
    std::string tensor;
    std::function<void(Tensor &row)> change;
};

// Autoregressive generation with a KV cache: each new token runs the model on that one position and
// attends to the keys and values cached for all earlier positions. Causal models only. An encoder-decoder's
// encoder runs once on the source, and each decoder block projects the encoder's output to its cross-attention
// keys and values once (Vaswani et al. 2017, §3.2.3): a new decoder token then adds one row to the self-attention
// cache and reads the fixed cross-attention one.
class Generator
{
public:
    Generator(std::shared_ptr<const Model> model, const std::vector<int> &prompt, SamplingOptions options = {});
    // The prompt is input.tokens (an encoder-decoder's decoder input), and for an encoder-decoder the source and its
    // padding are input.source and input.sourcePadding.
    Generator(std::shared_ptr<const Model> model, const Input &input, SamplingOptions options = {});
    // A decoder-only model's run with `edit` made at every position. Throws atlas::Error when no block makes the
    // tensor one position at a time.
    Generator(
        std::shared_ptr<const Model> model, const std::vector<int> &prompt, SamplingOptions options, StreamEdit edit);

    // Samples the next token from the current logits, appends it and runs it through the model.
    int generate();
    // Up to `count` tokens from generate(), fewer when the context fills.
    std::vector<int> continuation(int count);
    // The model's probability of the token generate() last chose, softmax(logits) at temperature 1 (before any
    // sampling temperature or top-k): how sure the model itself was.
    double lastProbability() const { return m_lastProbability; }

    const std::vector<int> &tokens() const { return m_tokens; }
    const Tensor &lastLogits() const { return m_logits; } // [V]: logits for the next position
    int cachedPositions() const { return m_cached; } // rows in every layer's K and V cache
    size_t cacheBytes() const; // 2 × layers × positions × Hkv·d floats (Hkv = H without grouped-query attention)
    int crossPositions() const { return m_crossKeys.empty() ? 0 : int(m_crossKeys.front().rows()); } // the source
    size_t crossCacheBytes() const; // 2 × layers × source positions × D floats, fixed once the encoder has run
    // Layer `layer`'s cache as [Hkv, positions, d] (a copy, for display): one K/V head per group of query heads.
    Tensor cachedKeys(int layer) const;
    Tensor cachedValues(int layer) const;

private:
    void feed(int token);
    void start(const Input &input);
    Tensor positionBias(int layer, const Tensor &q, int pos) const;
    void routeAlone(Tensor &out, const Tensor &x, const BlockWeights &b) const;
    void encodeSource(const Input &input);
    // The attention sub-layers of block `layer` on the one new position, from its normalised stream h (model/
    // blockrecipe.h's Attention and CrossAttention steps): out is the sub-layer's output, [1, D].
    void selfAttend(Tensor &out, const Tensor &h, int layer, int pos);
    void crossAttend(Tensor &out, const Tensor &h, int layer) const;

    std::shared_ptr<const Model> m_model;
    SamplingOptions m_options;
    std::mt19937_64 m_rng;
    std::vector<int> m_tokens;
    // per layer [rows, Hkv·d], rows [0, m_cached) filled, grown by doubling up to the context; RoPE models cache keys
    // already rotated
    std::vector<MatrixRM> m_keys, m_values;
    std::vector<std::vector<double>> m_ropeFrequencies; // θ_i of a RoPE model per layer (ModelConfig::ropeFrequencies)
    bool m_longRope = false; // LongRoPE: the text has outgrown the original context, and turns by the long factors
    std::vector<BlockRecipe> m_recipes; // each block's (model/blockrecipe.h), worked out once for every token
    StreamEdit m_edit;
    // Where m_edit.tensor is made: block m_editLayer's step m_editStep, or (m_editStep < 0) its stream m_editEntering
    // as it enters the block.
    int m_editLayer = -1, m_editStep = -1;
    std::string m_editEntering;
    int m_cached = 0;
    // an encoder-decoder's, per decoder layer [S, D]: Z W_k + b_k and Z W_v + b_v of the encoder's output Z
    std::vector<MatrixRM> m_crossKeys, m_crossValues;
    std::vector<int> m_sourcePadding;
    Tensor m_logits;
    double m_lastProbability = 0;
};

} // namespace atlas
