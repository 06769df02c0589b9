#pragma once

// How a block arranges its sub-layers, as data: the norms, the attention and feed-forward sub-layers and the
// residual adds, in order, with the names they read and write. The traced forward (engine/program.cpp), the cached
// generator (engine/generator.cpp) and the memory strategies (train/strategyrunner.cpp) all walk the one recipe, so
// an arrangement (pre-norm, post-norm, norms after the sub-layers, parallel, reversible, a decoder's cross-attention,
// a funnel's pooling) is
// written once. docs/architecture.md, "A block's recipe".

#include "model/modelconfig.h"
#include "model/parameternames.h"
#include "trace/names.h"

#include <string>
#include <vector>

namespace atlas {

// One step of a block. Its names are the block's own (docs/trace-names.md: "ln_1", "mid", "attn.out"), written under
// the layer's prefix, except the streams that enter the block: BlockStep::kInput, and a reversible block's two.
struct BlockStep
{
    enum class Kind {
        Norm, // out = Norm(in[0]) with the block's norm `norm` (LayerNorm or RMSNorm, the model's kind)
        Attention, // attn.out = SelfAttention(in[0]); with in[1], the queries read in[1] (a funnel's pooling layer)
        CrossAttention, // cross.out = CrossAttention(in[0], Z): a decoder block's queries against the encoder's output
        FeedForward, // mlp.down = FFN(in[0]): dense, gated, in chunks or a mixture of experts, as the model has
        FunnelPool, // pooled = pool(in[0]) (model/funnel.h)
        FunnelUpsample, // upsampled = up(in[0]) + the skip layer's stream (model/funnel.h)
        Add, // out = in[0] + in[1] (+ in[2]), summed left to right: a residual add
        FourierMixing, // fourier.out = Re(F_N in[0] F_d): FNet's block, in attention's place (model/fourierlayers.h)
        TimestepSignal, // timestep = in[0] + S(layer + 1): the Universal Transformer's step signal
                        // (model/sharedblocks.h)
    };
    static constexpr const char *kInput = "x"; // the stream entering the block
    static constexpr const char *kStream1 = "x1"; // a reversible block's two streams
    static constexpr const char *kStream2 = "x2";

    Kind kind;
    std::string out;
    std::vector<std::string> in;
    BlockPart norm = BlockPart::NormAttention; // Norm: whose weights (ln_1, ln_2, ln_cross, a sub-layer output's)
    std::string label; // Norm and Add: the op's label in the trace
    std::string formula; // Add: what it computes, as the Trace view shows it
};

struct BlockRecipe
{
    std::vector<BlockStep> steps;
    std::vector<std::string> outputs; // "out", or a reversible block's "out1" and "out2"

    // The block's tensors its backward pass reads: the input of every norm and of every sub-layer. The memory
    // strategies keep these (or recompute them) for each block.
    std::vector<std::string> readByBackward() const;
};

// Block `layer` of stack `stack` of a model of this configuration.
BlockRecipe blockRecipe(const ModelConfig &c, const names::Stack &stack, int layer);

// The trace's name of `local` in block `layer` of `stack`: the block's prefix before its own names, the streams
// that enter the block (names::residualStream, names::reversibleStream) for kInput, kStream1 and kStream2.
std::string blockTensor(const names::Stack &stack, int layer, const std::string &local);

// The trace's name of what block `layer`'s self-attention reads (its step's first input): "layer.2.ln_1" in a
// pre-norm block, the stream itself in a post-norm one. Throws atlas::Error for a block without self-attention.
std::string attentionInput(const ModelConfig &c, const names::Stack &stack, int layer);
// What block `layer`'s token-mixing sub-layer reads: its self-attention's input, or in an FNet block its Fourier
// transform's (model/fourierlayers.h).
std::string mixingInput(const ModelConfig &c, const names::Stack &stack, int layer);

} // namespace atlas
