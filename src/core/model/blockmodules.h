#pragma once

#include "model/model.h"

namespace atlas {

// A block's tensors by their role (BlockWeights::normWeight and normBias, defined with these).

// A block's linear map by its role, in the layout its checkpoint keeps it: GPT-2's Conv1D holds W as [in, out] and
// computes y = x W + b; nn.Linear, every other family's (ModelConfig::linearLayout), holds W as [out, in] and computes
// y = x Wᵀ + b. The forward, the generator and the backward pass find a block's weights here, by role, so that none
// of them branches on the layout.
struct LinearModule
{
    const Tensor &weight;
    const Tensor &bias; // empty where the module has none
    bool transposed; // nn.Linear: y = x Wᵀ + b
};

// Block `b`'s module `part`: Q, K, V, Qkv, Out, the cross-attention's, Up, Gate, Down. Throws atlas::Error for a part
// that is not one of the block's linear maps (a norm, the router, a table of positions).
LinearModule blockModule(const ModelConfig &c, const BlockWeights &b, BlockPart part);

} // namespace atlas
