#include "model/blockmodules.h"

#include "util/error.h"

namespace atlas {

namespace {

void requireNorm(BlockPart part)
{
    if (!isNormPart(part))
        throw Error("a block's norm is ln_1, ln_2, ln_cross, a sub-layer's output norm, q_norm or k_norm: asked for "
                    "another part");
}

bool isLinearPart(BlockPart part)
{
    switch (part) {
    case BlockPart::Q:
    case BlockPart::K:
    case BlockPart::V:
    case BlockPart::Qkv:
    case BlockPart::Out:
    case BlockPart::CrossQ:
    case BlockPart::CrossK:
    case BlockPart::CrossV:
    case BlockPart::CrossKv:
    case BlockPart::CrossOut:
    case BlockPart::Up:
    case BlockPart::Gate:
    case BlockPart::Down:
        return true;
    default:
        return false;
    }
}

} // namespace

const Tensor &BlockWeights::normWeight(BlockPart part) const
{
    requireNorm(part);
    return weight(part);
}

const Tensor &BlockWeights::normBias(BlockPart part) const
{
    requireNorm(part);
    return bias(part);
}

LinearModule blockModule(const ModelConfig &c, const BlockWeights &b, BlockPart part)
{
    if (!isLinearPart(part))
        throw Error("a block's linear module is a projection of attention or of the feed-forward: asked for another "
                    "part");
    // Phi-3's gate_up_proj, held as the part Gate: the gate's rows, then up's.
    if (c.fusesProjections() && (part == BlockPart::Gate || part == BlockPart::Up))
        return {b.weight(BlockPart::Gate), b.bias(BlockPart::Gate), part == BlockPart::Up ? c.dFF : 0, c.dFF};
    return {b.weight(part), b.bias(part)};
}

} // namespace atlas
