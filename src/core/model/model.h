#pragma once

#include "model/modelconfig.h"
#include "model/parameternames.h"
#include "tensor/tensor.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace atlas {

// A set of parameters held by role (model/parameternames.h's BlockPart): each part's weight and bias, empty where the
// family has none. A linear part is held as nn.Linear's [out, in] in every family (model/parameterlist.h; a GPT-2
// checkpoint's Conv1D [in, out] is transposed at load and back at save).
class PartTensors
{
public:
    Tensor &weight(BlockPart part) { return m_weights[index(part)]; }
    const Tensor &weight(BlockPart part) const { return m_weights[index(part)]; }
    Tensor &bias(BlockPart part) { return m_biases[index(part)]; }
    const Tensor &bias(BlockPart part) const { return m_biases[index(part)]; }

private:
    static size_t index(BlockPart part) { return static_cast<size_t>(part); }
    std::array<Tensor, kBlockPartCount> m_weights, m_biases;
};

// One expert of a mixture-of-experts layer: a feed-forward network of its own (parts Up, Down and, gated, Gate).
using ExpertWeights = PartTensors;

// How fresh weights are drawn: as GPT-2 and every family here draw them (normal, σ = 0.02), or every weight matrix
// (embeddings, the blocks' maps, the head's) Xavier-uniform (Glorot and Bengio 2010: U(−a, a), a = √(6 / (fan_in +
// fan_out)), the setting of Xiong et al. 2020); norms start at 1 and biases at 0 either way.
enum class WeightInit { Family, Xavier };

// One block's parameters by role, and its experts in a mixture-of-experts layer (its router is the part Router).
struct BlockWeights : PartTensors
{
    std::vector<ExpertWeights> experts;

    // The block's norm `part` (BlockPart::NormAttention, NormFfn, NormCross, NormAttentionOut, NormFfnOut, or QK-norm's
    // QNorm and KNorm): its scale γ and its shift β (empty for RMSNorm). Throws for a part that is not a norm.
    const Tensor &normWeight(BlockPart part) const;
    const Tensor &normBias(BlockPart part) const;
};

// A model of any architecture (ModelConfig::architecture): config plus weights, loaded from or saved to a Hugging Face
// directory in its family's layout (config.json + model.safetensors, or shards listed in model.safetensors.index.json).
// The output projection is tied to wte unless the config says otherwise.
class Model
{
public:
    static constexpr int kMaxSharedSteps = 64; // withDepth's bound
    ModelConfig config;
    Tensor wte; // [V, D]
    Tensor wpe; // [context, D] learned positions (empty for every other kind)
    Tensor relativeBias; // [buckets, H] T5's bias per distance bucket, shared by the layers (empty for other kinds)
    // A T5 checkpoint's encoder has a table of its own (encoder.block.0…relative_attention_bias); relativeBias is then
    // the decoder's. Empty where both stacks share relativeBias.
    Tensor encoderRelativeBias;
    std::vector<BlockWeights> blocks; // the decoder's (or the encoder-only model's) blocks
    Tensor lnfWeight, lnfBias; // [D]
    Tensor lmHead; // [V, D] an untied output head (lm_head.weight; ModelConfig::tiedHead false), else empty
    // BERT's: segment embeddings, the LayerNorm of the summed embeddings, the masked-LM head's transform (dense, GELU,
    // then its LayerNorm in lnfWeight / lnfBias) and output bias, and where present the next-sentence head.
    Tensor wtt; // [types, D]
    Tensor embedLnWeight, embedLnBias; // [D]
    Tensor headDenseWeight, headDenseBias; // [D, D], [D]
    Tensor outputBias; // [V]
    Tensor poolerWeight, poolerBias; // [D, D], [D]
    Tensor nspWeight, nspBias; // [2, D], [2]
    Tensor haltingWeight, haltingBias; // [1, D], [1]: adaptive computation time's halting unit (ModelConfig::act)
    // An encoder–decoder's encoder stack ("encoder.h.{i}.", "encoder.ln_f"); it shares wte and the positions.
    std::vector<BlockWeights> encoderBlocks;
    Tensor encoderLnfWeight, encoderLnfBias; // [D]

    std::string name; // built-in name, or the directory's last component
    std::string directory; // where it was loaded from: a directory or a GGUF file (empty for a model made in memory)
    // How its checkpoint stores the weights: F32, F16, BF16 or "mixed"; a GGUF file's type (Q8_0, Q4_K_M …). The engine
    // computes in float32.
    std::string dtype = "F32";

    // What a GGUF file held, for a model read from one (model/ggufmodel.h); empty for every other model.
    struct GgufSource
    {
        std::string architecture; // general.architecture: "llama", "qwen2" …
        uint64_t fileBytes = 0;
        double bitsPerWeight = 0; // of its tensors' data, as stored
        // The llama architecture's q and k rows are stored for RoPE on adjacent pairs (llama.cpp's converter permutes
        // them); the reader puts them back in the rotate-half order the engine turns.
        bool pairedRope = false;
    };
    std::optional<GgufSource> gguf;

    // A model directory (config.json and safetensors) or a GGUF file (model/ggufmodel.h).
    static Model load(const std::string &directory);
    // config.json and model.safetensors, each atomically; `metadata` goes into the safetensors header.
    void save(const std::string &directory, const std::map<std::string, std::string> &metadata = {}) const;
    // GPT-2's initialisation (normal, std 0.02; LayerNorm weight 1, bias 0) from a fixed seed; with WeightInit::Xavier
    // every weight matrix is drawn Xavier-uniform instead.
    static Model random(const ModelConfig &config, uint64_t seed, WeightInit init = WeightInit::Family);

    // The sinusoidal encoding (Vaswani et al. 2017) a model of that kind adds to its embedding, for `out` of T × D:
    // PE(t, 2i) = sin(t / 10000^(2i/D)), PE(t, 2i+1) = cos(t / 10000^(2i/D)) (no parameters, no backward).
    static void sinusoidalPositions(Tensor &out, int64_t first = 0); // rows for t = first, first + 1, …
    // This model with another positional encoding, for comparing kinds on the same weights (`dump --positions`):
    // any kind without learned parameters (sinusoidal, rope, rope-half, alibi, none), or the model's own. Throws
    // atlas::Error naming `field` when the kind needs a table the model does not have, or does not fit its heads.
    Model withPositions(PositionKind kind, const std::string &field) const;
    // The α of layer i's attention normaliser (ops::entmax_forward): empty for softmax, {2} for sparsemax, {1.5}, or
    // one per head for a learned α.
    std::vector<float> attentionAlphas(int layer) const;
    // Each head's adaptive span z_h = clamp(v_h, 0, 1) · n_positions in layer i, in tokens; empty without spans.
    std::vector<float> attentionSpans(int layer) const;
    // After an optimiser step: every span fraction v back into [0, 1], as the paper's reference code clamps it.
    void clampSpanFractions();

    // Shared blocks (ModelConfig::shared): every layer's weights become block 0's again, as copies that share their
    // data; after a load, a draw and each optimiser step. Nothing for any other model.
    void tieSharedBlocks();
    // This shared model (ModelConfig::shared) applying its block `steps` times instead of its own count, 1..64: in a
    // Universal Transformer depth is chosen at run time. Throws atlas::Error naming `field` for a model whose blocks
    // are its own, or a count outside.
    Model withDepth(int steps, const std::string &field) const;
    // One empty BlockWeights per layer, with room for its experts: the parameters() map then names every slot.
    void allocateBlocks();

    // This model routing with another capacity factor and top-k (`dump --capacity-factor --expert-top-k`, the
    // Experts view's controls); 0 keeps the model's own. Throws atlas::Error naming `field` for a model without
    // experts, a factor outside (0, 1024] or a k outside 1..E.
    Model withRouting(double capacityFactor, int topK, const std::string &field) const;

    // The model's own parameter `part` (a final norm's of `stack`): its weight, or its bias (BERT's masked-LM head's
    // norm is lnfWeight's and lnfBias's). Throws atlas::Error for a part the model holds no such tensor for.
    Tensor &tensorOf(ModelPart part, const names::Stack &stack, bool bias);
    const Tensor &tensorOf(ModelPart part, const names::Stack &stack, bool bias) const;

    // Every parameter under its safetensors name without the family's prefix ("h.0.attn.c_attn.weight" in GPT-2's
    // layout): the names of model/parameternames.h.
    std::map<std::string, const Tensor *> parameters() const;
    // The output projection the logits read: lm_head when untied, else wte.
    const Tensor &outputWeight() const { return lmHead.empty() ? wte : lmHead; }
    std::map<std::string, Tensor *> parameters();
    // The parameters its checkpoint keeps transposed, as GPT-2's Conv1D [in, out] (held [out, in]): what save, load
    // and a trainer checkpoint's moments turn.
    std::set<std::string> conv1dParameterNames() const;
    // `tensors` by parameter name after their first `skip` characters (a trainer checkpoint's moments are "m.<name>"
    // and "v.<name>"), each Conv1D matrix transposed: from the held [out, in] to the checkpoint's [in, out], or back.
    void transposeConv1dMatrices(std::map<std::string, Tensor> &tensors, size_t skip = 0) const;
    int64_t parameterCount() const;
    // The parameters a model of `config` has, counted from the shapes alone (nothing is allocated): for an
    // estimate of the memory a request implies before it is made.
    static int64_t parameterCountOf(const ModelConfig &config);
    // A forward pass's floating-point operations on `tokens` tokens, about: 2 per parameter and token, and the
    // attention's scores and weighted sums, 4·T²·D per layer. For budgets (util/workbudget.h), not for timing.
    static double forwardFlopsOf(const ModelConfig &config, int tokens);
};

// `model` when `tokens` fit its context. Otherwise, for positions computed at any distance (every kind but learned),
// a copy whose context is stretched to `tokens`: the model runs past the length it was trained on (extrapolation);
// for a learned table, `model` itself, which the engine then refuses by name.
std::shared_ptr<const Model> stretchedForLength(std::shared_ptr<const Model> model, size_t tokens);

} // namespace atlas
