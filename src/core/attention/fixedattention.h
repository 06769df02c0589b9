#pragma once

#include "attention/attentionresult.h"

namespace atlas::attention {

struct FixedParams
{
    int stride = 128; // l
    int summary = 1; // c: the last c positions of every l-block are "summary" cells every query attends
};

// The Sparse Transformer's fixed pattern (Child, Gray, Radford & Sutskever 2019, §4.2), for one head, as the
// merged head over the paper's two: A(1)_i = {j : ⌊j/l⌋ = ⌊i/l⌋} and A(2)_i = {j : j mod l ∈ {t, t+1, …, l}}
// with t = l − c (so j mod l ≥ l − c, j mod l being at most l − 1):
//   query i attends key j when  ⌊j/l⌋ = ⌊i/l⌋  or  j mod l ≥ l − c,
// intersected with j <= i when options.causal (the paper's autoregressive setting). Padding keys are masked.
// Each block of consecutive queries attends the l-blocks it spans plus every summary column.
// The work is O(T · (l + c·T/l) · d).
// q, k, v are (T,d); result.context is (T,d); no extras.
// Throws atlas::Error naming the parameter the kernel cannot run with.
void checkFixedParams(const FixedParams &params);

AttentionResult fixed_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const FixedParams &params, const AttentionOptions &options);

} // namespace atlas::attention
