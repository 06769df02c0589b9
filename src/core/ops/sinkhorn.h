#pragma once

// Sparse Sinkhorn attention's ops (Tay et al. 2020; model/sinkhorn.h). Blocks of `block` tokens; N = ⌈T / block⌉.

#include "tensor/tensor.h"

#include <cstdint>

namespace atlas::ops {

// out [N, D]: P_J = Σ of the rows t of x [T, D] in block J (⌊t / block⌋ = J). The backward adds dP_J to each row.
void block_sum_forward(Tensor &out, const Tensor &x, int block);
void block_sum_backward(Tensor &dx, const Tensor &dout, int block);

// g [N, N]: Gumbel(0, 1) noise, −log(−log u) with u uniform in (0, 1), drawn from `seed`.
void gumbel_noise(Tensor &g, uint64_t seed);

// S [N, N] = exp(Z_k) where Z_0 = (R + G) / τ (G: `noise`, or none) and each of the k iterations subtracts from
// every row its log-sum-exp, then from every column its own: S's columns sum to 1, its rows nearly.
void sinkhorn_forward(Tensor &S, const Tensor &logits, const Tensor *noise, int iterations, float temperature);
// dlogits [N, N] = ∂L/∂R from dS, through the k iterations again (recomputed, in double precision).
void sinkhorn_backward(
    Tensor &dlogits, const Tensor &dS, const Tensor &logits, const Tensor *noise, int iterations, float temperature);

// scores [H, T, T] = Q Kᵀ/√d over every pair; S [N, N]. Query t of block I scores `block` sorted keys,
// uᵣ = Σ_J S_IJ scores(t, J·block + r) (= q_t · Σ_J S_IJ k_J·block+r: a missing row of a short last block is a zero
// key), and the `block` keys of its own block, wᵣ = scores(t, I·block + r) (−∞ past the end); one softmax over the
// 2·block of them gives blockProbs [H, T, 2·block] (sorted slots first). probs [H, T, T] is the weight each key's value
// gets in the context: probs(t, J·block + r) = aᵣ S_IJ + [J = I] cᵣ.
void sinkhorn_attention_forward(Tensor &blockProbs, Tensor &probs, const Tensor &scores, const Tensor &S, int block);
// From dprobs [H, T, T] (the context's gradient with respect to probs): dscores [H, T, T] and dS [N, N] (added to).
void sinkhorn_attention_backward(Tensor &dscores, Tensor &dS, const Tensor &dprobs, const Tensor &blockProbs,
    const Tensor &scores, const Tensor &S, int block);

} // namespace atlas::ops
