#pragma once

#include "tensor/tensor.h"

#include <vector>

// The forward operations of a GPT-style transformer, one function per operation (llm.c style). Each takes
// its output first, then its inputs; shapes are in the comments (T tokens, D model width, H heads,
// d = D/H, F FFN width, V vocabulary). Outputs must already have their shape.
namespace atlas::ops {

// out is (T,D); wte is (V,D); tokens are T ids in [0,V)
void embedding_forward(Tensor &out, const Tensor &wte, const std::vector<int> &tokens);
// out is (T,D): rows 0..T-1 of wpe (context,D)
void positions_learned_forward(Tensor &out, const Tensor &wpe);
// out is (T,D): PE(t,2i) = sin(t / 10000^(2i/D)), PE(t,2i+1) = cos(t / 10000^(2i/D))
void positions_sinusoidal_forward(Tensor &out);
// out, a, b are all the same shape
void add_forward(Tensor &out, const Tensor &a, const Tensor &b);
// out, inp are (T,D); weight, bias are (D)
void layernorm_forward(Tensor &out, const Tensor &inp, const Tensor &weight, const Tensor &bias, float eps);
// out is (T,O); inp is (T,I); weight is (I,O) (Conv1D layout); bias is (O)
void linear_forward(Tensor &out, const Tensor &inp, const Tensor &weight, const Tensor &bias);
// q, k, v are (H,T,d); qkv is (T,3D) with columns Q | K | V, each split into H blocks of d
void split_heads_forward(Tensor &q, Tensor &k, Tensor &v, const Tensor &qkv, int heads);
// out is (H,T,T); q, k are (H,T,d): out[h] = q[h] k[h]^T * scale
void attention_scores_forward(Tensor &out, const Tensor &q, const Tensor &k, float scale);
// out, scores are (H,T,T): out = scores where query i may attend key j (j <= i when causal, j not padding),
// else -inf
void attention_mask_forward(Tensor &out, const Tensor &scores, bool causal, const std::vector<int> &padding);
// out, inp are (..., N): softmax over the last axis; a row that is all -inf becomes all 0
void softmax_forward(Tensor &out, const Tensor &inp);
// out is (H,T,d); probs is (H,T,T); v is (H,T,d)
void attention_context_forward(Tensor &out, const Tensor &probs, const Tensor &v);
// out is (T,D); ctx is (H,T,d)
void merge_heads_forward(Tensor &out, const Tensor &ctx);
// out, inp same shape: 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))
void gelu_tanh_forward(Tensor &out, const Tensor &inp);
// out, inp same shape: 0.5 u (1 + erf(u / sqrt(2)))
void gelu_erf_forward(Tensor &out, const Tensor &inp);
// out, inp same shape: max(0, u)
void relu_forward(Tensor &out, const Tensor &inp);
// out is (T,V); inp is (T,D); wte is (V,D): out = inp wte^T (output projection tied to the embedding)
void logits_forward(Tensor &out, const Tensor &inp, const Tensor &wte);

} // namespace atlas::ops
