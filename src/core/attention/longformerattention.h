#pragma once

#include "attention/attentionresult.h"

#include <vector>

namespace atlas::attention {

struct LongformerParams
{
    int window = 512; // w
    int dilation = 1; // δ
    std::vector<int> global; // positions that attend every key and that every query attends
};

// Longformer's attention (Beltagy, Peters & Cohan 2020), for one head. Query i attends key j when
//   j is global, or i is global, or j = i + δ·m with  |m| ≤ ⌊w/2⌋  (not causal: w/2 on each side)
//                                                    or −w ≤ m ≤ 0  (causal: the past w keys, and itself)
// and, when causal, always only j <= i. Padding keys are masked. The window is computed per residue class
// mod δ (positions r, r+δ, r+2δ … form an undilated sequence), so dilation costs nothing extra.
// The work is O(T · (w + globals) · d) plus O(globals · T · d).
// q, k, v are (T,d); result.context is (T,d); no extras.
AttentionResult longformer_attention_forward(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
    const LongformerParams &params, const AttentionOptions &options);

} // namespace atlas::attention
