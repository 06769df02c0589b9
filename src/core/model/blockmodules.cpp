#include "model/blockmodules.h"

#include "util/error.h"

namespace atlas {

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
    case BlockPart::Qkv: // GPT-2's c_attn, GPT-NeoX's query_key_value
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
        return linear ? LinearModule {b.upWeight, b.upBias, true} : LinearModule {b.fcWeight, b.fcBias, false};
    case BlockPart::Gate:
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
