#pragma once

#include "model/model.h"
#include "trace/trace.h"

#include <string>
#include <vector>

// What QK-norm (Qwen3, OLMo 2) does to one layer's queries and keys, read from the trace: each head's ‖q_i‖ and
// ‖k_j‖ before the norm (layer.{l}.attn.q, .k) and as they meet in the scores (.q_norm, .k_norm, or .q_rot, .k_rot
// after RoPE, which turns them without changing their length), the range of its scores over the pairs the mask
// keeps (.masked), and two bounds on that range:
//   - this input's: |s_ij| = scale·|q_i·k_j| ≤ scale·‖q_i‖‖k_j‖ (Cauchy–Schwarz), so the scores lie within
//     ± scale · max_i ‖q_i‖ · max_j ‖k_j‖;
//   - the weights' alone, with QK-norm: a row x of n entries normalised as γ ⊙ x / √(mean(x²) + ε) has
//     ‖γ ⊙ x / rms‖ < √n · max|γ| (Σ x²/rms² < n), whatever x is. Per head (Qwen3) n = d; over the whole
//     projection (OLMo 2) a head's part is at most the whole row's, n = H·d for queries and Hkv·d for keys, with
//     that head's slice of γ. So no input can take a head's scores past ± scale · √n_q max|γ_q| · √n_k max|γ_k|.
// Without QK-norm nothing but the input bounds ‖q‖ and ‖k‖: the scores can grow with the residual stream.
namespace atlas {

struct QkNormHead
{
    // ‖·‖ per position: before the norm, and as the vectors meet in the scores (equal to before without QK-norm,
    // turned by RoPE or not).
    std::vector<float> queryBefore, queryAfter, keyBefore, keyAfter;
    float lowest = 0, highest = 0; // the head's scores over the pairs the mask keeps
    float inputBound = 0; // scale · max ‖q_i‖ · max ‖k_j‖ of the vectors that meet
    // With QK-norm: the longest a query and a key can be after it, √n_q max|γ_q| and √n_k max|γ_k|, and the
    // scores' bound they make, scale · queryLimit · keyLimit (all 0 without).
    float queryLimit = 0, keyLimit = 0, weightBound = 0;
};

struct QkNormEffect
{
    int layer = 0, dim = 0; // d per head
    QkNorm kind = QkNorm::None;
    float scale = 1; // what q·k is multiplied by in the scores (1/√d, or 1 for a model that does not divide)
    std::vector<QkNormHead> heads;
};

// Why the model's layer `layer` cannot be shown (an encoder–decoder, scores with a position bias), or empty.
std::string qkNormEffectProblem(const Model &model, int layer);
// The traced tensors qkNormEffect reads for layer `layer`, in the order the forward pass makes them.
std::vector<std::string> qkNormEffectInputs(const ModelConfig &config, int layer);
// Throws atlas::Error when qkNormEffectProblem is not empty or an input is not traced. A trace that keeps attention on
// demand gives the masked scores through the layer's readout (`padding`: the input's).
QkNormEffect qkNormEffect(const Model &model, const Trace &trace, int layer, const std::vector<int> &padding = {});

} // namespace atlas
