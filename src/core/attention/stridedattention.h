#pragma once

#include "attention/attentionresult.h"

namespace atlas::attention {

struct StridedParams
{
    int stride = 128; // l (the paper takes l ≈ √T)
};

// The Sparse Transformer's strided pattern (Child, Gray, Radford & Sutskever 2019, §4.2), for one head. The
// paper factorises it into two heads, A(1)_i = {t, t+1, …, i} with t = max(0, i − l) and A(2)_i = {j : (i − j)
// mod l = 0}, and also describes a merged head attending their union; one head here is that merged head:
//   query i attends key j when  |i − j| ≤ l  or  (i − j) mod l = 0.
// The paper's definition is the causal one; it is exactly this pattern intersected with j <= i, which is what
// options.causal gives. Without causal the same rule looks both ways. Padding keys are masked.
// Computed in two passes merged by an online softmax: the band (blocks of consecutive queries), and the
// columns (each residue class mod l attends itself, minus what the band already counted).
// The work is O(T · (l + T/l) · d): O(T √T d) at l = √T.
// q, k, v are (T,d); result.context is (T,d); no extras.
// Throws atlas::Error naming the parameter the kernel cannot run with.
void checkStridedParams(const StridedParams &params);

AttentionResult strided_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const StridedParams &params, const AttentionOptions &options);

} // namespace atlas::attention
