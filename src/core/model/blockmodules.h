#pragma once

#include "model/model.h"

namespace atlas {

// A block's norms and linear maps by their role (BlockWeights::normWeight and normBias, defined with these).

// A block's linear map by its role: y = x Wᵀ + b with W held as [out, in] in every family (a GPT-2 checkpoint's
// Conv1D [in, out] is transposed at load). The forward, the generator and the backward pass find a block's weights
// here, by role.
struct LinearModule
{
    const Tensor &weight;
    const Tensor &bias; // empty where the module has none
    // A module that is part of a fused nn.Linear (Phi-3's gate_up_proj holds the gate's rows, then up's): its rows
    // [firstRow, firstRow + rows) of `weight`; rows 0 = all of it.
    int64_t firstRow = 0, rows = 0;
    // The module's own rows of an nn.Linear weight, [out, in] (the whole weight when it is not fused).
    ConstMatrixMap ownRows() const
    {
        return rows > 0 ? ConstMatrixMap(weight.data() + firstRow * weight.dim(1), rows, weight.dim(1))
                        : weight.matrix();
    }
};

// Block `b`'s module `part`: Q, K, V, Qkv, Out, the cross-attention's, Up, Gate, Down. Throws atlas::Error for a part
// that is not one of the block's linear maps (a norm, the router, a table of positions).
LinearModule blockModule(const ModelConfig &c, const BlockWeights &b, BlockPart part);

} // namespace atlas
