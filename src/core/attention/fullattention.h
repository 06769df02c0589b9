#pragma once

#include "attention/attentionresult.h"

namespace atlas::attention {

// The reference: softmax(q kᵀ/√d + mask) v, where the mask hides padding keys and, when causal, keys j > i.
// Computed a block of query rows at a time (scores (rows,T), never (T,T)) with the engine's matrix products,
// so its memory is linear in T and a benchmark against the sparse kernels is fair. A query with no key to
// attend gets a zero context (as the engine's softmax gives an all-masked row zero weights).
// q, k, v are (T,d); result.context is (T,d); weights and mask (T,T) when options.dense; no extras.
AttentionResult full_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const AttentionOptions &options);

} // namespace atlas::attention
