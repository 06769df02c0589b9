#pragma once

#include "attention/attentionresult.h"

#include <cstdint>

namespace atlas::attention {

struct PerformerParams
{
    int features = 256; // m random features
    uint64_t seed = 0;
};

// Performer's FAVOR+ (Choromanski et al. 2021), for one head. With q' = q/d^¼ and k' = k/d^¼ (so that
// q'·k' = q·k/√d), softmax attention's kernel exp(q'·k') is estimated by φ(q')·φ(k') with positive random
// features
//   φ(x) = exp(ω_r·x − |x|²/2) / √m,  r = 1 … m,
// where the ω_r are orthogonal random features: blocks of d rows, each block the orthonormal columns of Q in
// the QR factorisation of a d×d Gaussian matrix (GaussianStream(seed, block)), column r times sign(R_rr) so
// that Q is uniform over the orthogonal matrices, every row then rescaled to the length of an independent
// d-dimensional Gaussian vector (chi-distributed, GaussianStream(seed, blocks)). Each ω_r is then N(0, I).
//   context_i = Σ_j φ(q'_i)·φ(k'_j) v_j / Σ_j φ(q'_i)·φ(k'_j)
// computed as φ(Q) (φ(K)ᵀ V) in O(T · m · d), or, when causal, with prefix sums of φ(k_j) v_jᵀ and φ(k_j)
// taken 64 positions at a time. Stabilised as in the authors' code: a query's exponents are shifted by that
// query's largest ω_r·q' (a per-row factor, cancelled by the normalisation), every key's by the largest ω_r·k'
// over all keys (one common factor, also cancelled; the future keys' exponents set it, but only as a
// scale that divides out). No ε is added to φ (the authors add 1e-6), so numerator and denominator stay
// unbiased estimates. Padding keys get φ = 0.
// q, k, v are (T,d); result.context is (T,d); extras "features" (m,d), the ω. Dense weights are
// φ(q'_i)·φ(k'_j) / Σ_j' φ(q'_i)·φ(k'_j') (rows sum to 1); the mask is every non-padding key (j <= i when causal).
AttentionResult performer_attention_forward(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
    const PerformerParams &params, const AttentionOptions &options);

// (m,d): the orthogonal random features ω described above.
MatrixRM performer_random_features(int64_t m, int64_t d, uint64_t seed);

} // namespace atlas::attention
