#include "model/blockmodules.h"

#include "util/error.h"

namespace atlas {

namespace {

// A block's norm by its role: γ, or β (empty for RMSNorm's).
const Tensor &normOf(const BlockWeights &b, BlockPart part, bool bias)
{
    static const Tensor none; // QK-norm is an RMSNorm: no β
    switch (part) {
    case BlockPart::NormAttention:
        return bias ? b.ln1Bias : b.ln1Weight;
    case BlockPart::NormFfn:
        return bias ? b.ln2Bias : b.ln2Weight;
    case BlockPart::NormCross:
        return bias ? b.lnCrossBias : b.lnCrossWeight;
    case BlockPart::QNorm:
        return bias ? none : b.qNormWeight;
    case BlockPart::KNorm:
        return bias ? none : b.kNormWeight;
    case BlockPart::NormAttentionOut:
        return bias ? none : b.attnOutNormWeight;
    case BlockPart::NormFfnOut:
        return bias ? none : b.ffnOutNormWeight;
    default:
        throw Error("a block's norm is ln_1, ln_2, ln_cross, a sub-layer's output norm, q_norm or k_norm: asked for "
                    "another part");
    }
}

} // namespace

const Tensor &BlockWeights::normWeight(BlockPart part) const
{
    return normOf(*this, part, false);
}

const Tensor &BlockWeights::normBias(BlockPart part) const
{
    return normOf(*this, part, true);
}

LinearModule blockModule(const ModelConfig &c, const BlockWeights &b, BlockPart part)
{
    static const Tensor none; // T5's cross-attention keys and values have no bias
    const bool linear = c.linearLayout();
    switch (part) {
    case BlockPart::Q:
        return {b.qWeight, b.qBias, true};
    case BlockPart::K:
        return {b.kWeight, b.kBias, true};
    case BlockPart::V:
        return {b.vWeight, b.vBias, true};
    case BlockPart::Qkv: // GPT-2's c_attn, GPT-NeoX's query_key_value, Phi-3's qkv_proj
        return linear ? LinearModule {b.qkvWeight, b.qkvBias, true} : LinearModule {b.attnWeight, b.attnBias, false};
    case BlockPart::Out:
        return linear ? LinearModule {b.oWeight, b.oBias, true}
                      : LinearModule {b.attnProjWeight, b.attnProjBias, false};
    case BlockPart::CrossQ:
        return {b.crossQWeight, b.crossQBias, linear};
    case BlockPart::CrossK:
        return {b.crossKWeight, none, true};
    case BlockPart::CrossV:
        return {b.crossVWeight, none, true};
    case BlockPart::CrossKv:
        return {b.crossKvWeight, b.crossKvBias, false};
    case BlockPart::CrossOut:
        return {b.crossProjWeight, b.crossProjBias, linear};
    case BlockPart::Up:
        if (c.fusesProjections()) // gate_up_proj's second half
            return {b.gateUpWeight, none, true, c.dFF, c.dFF};
        return linear ? LinearModule {b.upWeight, b.upBias, true} : LinearModule {b.fcWeight, b.fcBias, false};
    case BlockPart::Gate:
        if (c.fusesProjections()) // gate_up_proj's first half
            return {b.gateUpWeight, none, true, 0, c.dFF};
        return {b.gateWeight, b.gateBias, true};
    case BlockPart::Down:
        return linear ? LinearModule {b.downWeight, b.downBias, true}
                      : LinearModule {b.fcProjWeight, b.fcProjBias, false};
    default:
        throw Error("a block's linear module is a projection of attention or of the feed-forward: asked for another "
                    "part");
    }
}

} // namespace atlas
