#pragma once

#include "attention/attentionresult.h"

#include <cstdint>

namespace atlas::attention {

struct LinformerParams
{
    int k = 256; // projected length
    uint64_t seed = 0; // E = GaussianStream(seed, 0).matrix(k, T, 1/√k): entries N(0, 1/k)
    bool identity = false; // E = I (needs k = T): then the kernel is full attention exactly
    Tensor projection; // (k,T) a given E; when set, k, seed and identity are ignored
};

// Linformer (Wang, Li, Khabsa, Fang & Ma 2020), for one head: keys and values are projected along the
// sequence, K' = E k and V' = E v (k,d), and context = softmax(q K'ᵀ/√d) V'. The work is O(T · k · d).
// Padding: E's columns of padding positions are zeroed, so a padding key adds to no projected key or value,
// and a projected key with no non-padding position in it (a zero row of E) is masked.
// Not causal: each projected key mixes all T positions, the future included, so no mask on the (T,k) scores
// can hide future tokens; a causal request throws atlas::Error.
// q, k, v are (T,d); result.context is (T,d); extras "projection" (k,T), the E used. Dense weights are the
// effective weights on the original values, P E (T,T) with P = softmax(q K'ᵀ/√d): they can be negative and
// their rows need not sum to 1 (they do when E = I). The mask is 1 on every non-padding key.
AttentionResult linformer_attention_forward(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
    const LinformerParams &params, const AttentionOptions &options);

} // namespace atlas::attention
