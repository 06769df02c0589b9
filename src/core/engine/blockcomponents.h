#pragma once

// What a block's sub-layers compute beside the ops themselves, written once for the traced forward (program*.cpp),
// the generator's K/V-cache path (generator.cpp) and the backward pass (train/backwardpass.cpp): a linear module in
// either layout, the norm, the Q/K/V projection in each family's layout and its split into heads, the output
// projection, the rotation's convention and the scores' scale. The forward traces one op per step; the generator
// runs the same functions on its one new row; the backward pass inverts them. The feed-forward's are in
// engine/feedforward.h.

#include "model/blockmodules.h"
#include "ops/ops.h"

#include <string>
#include <vector>

namespace atlas {

// y = x W + b or x Wᵀ + b, as the module's layout says; out is (rows, out).
void moduleForward(Tensor &out, const Tensor &x, const LinearModule &m);

// What an RMSNorm multiplies by: γ as stored, or 1 + γ for Gemma (ModelConfig::normAddsOne). Its gradient is γ's.
Tensor normScale(const Tensor &weight, const ModelConfig &c);
// The model's norm of x's rows: LayerNorm with γ and β, or RMSNorm with γ alone (1 + γ for Gemma).
void normForward(Tensor &out, const Tensor &x, const Tensor &weight, const Tensor &bias, const ModelConfig &c);
// One addend's share of the norm of a sum of rows, `share` a part of `sum` [T, D], in place: the norm with its scale
// taken from `sum` is linear, so the shares of a sum's addends add up to the norm of the sum (LayerNorm's β apart,
// which belongs to no addend). RMSNorm: γ ⊙ share / √(mean(sum²) + ε); LayerNorm: γ ⊙ (share − mean(share)) /
// √(var(sum) + ε).
void normShare(Tensor &share, const Tensor &sum, const Tensor &weight, const ModelConfig &c);
// "LN(x) = γ₁ ⊙ (x − mean(x)) / √(var(x) + ε) + β₁" and the like, `sub` subscripting γ and β.
std::string normFormula(const ModelConfig &c, const std::string &sub);

// QK-norm (ModelConfig::qkNorm) on x [heads, rows, d], with γ (q_norm or k_norm): QkNorm::Heads normalises each
// head's row of d with γ [d] (Qwen3); QkNorm::Projections each position's heads together, a row of heads·d, with γ
// [Hγ·d] repeated over the heads that share it (OLMo 2: the trace's K heads repeat the Hkv K/V heads, whose mean
// square is the same). The backward adds into dx and dweight.
void qkNormForward(Tensor &out, const Tensor &x, const Tensor &weight, const ModelConfig &c);
void qkNormBackward(
    Tensor &dx, Tensor &dweight, const Tensor &dout, const Tensor &x, const Tensor &weight, const ModelConfig &c);
// "RMS_q(Q_h) = γ_q ⊙ Q_h / √(…)" and the like, for the queries (`keys` false) or the keys.
std::string qkNormFormula(const ModelConfig &c, bool keys);

// The modules of the Q/K/V projection, in the order of attn.qkv's columns: {Qkv} for a fused one (GPT-2's c_attn,
// GPT-NeoX's query_key_value), {Q, K, V} for the Llama family's and T5's three.
std::vector<BlockPart> qkvParts(const ModelConfig &c);
// attn.qkv's width, (H + 2 Hkv)·d: H query heads and Hkv key/value heads of d.
int64_t qkvWidth(const ModelConfig &c);
// Where head `head`'s queries (which = 0), or K/V head `head`'s keys (1) or values (2), begin in attn.qkv: [Q K V]
// side by side, or GPT-NeoX's [q₀ k₀ v₀ q₁ k₁ v₁ …].
int64_t qkvColumn(const ModelConfig &c, int which, int64_t head);
// qkv (rows, qkvWidth) = the block's projection of x (rows, D), in the family's column order.
void projectQkv(Tensor &qkv, const Tensor &x, const ModelConfig &c, const BlockWeights &b);
std::string qkvFormula(const ModelConfig &c);

// attn.qkv's heads: q [H, rows, d]; k and v [H, rows, d] with `repeatKv` (query head h gets K/V head ⌊h / (H/Hkv)⌋,
// as Hugging Face's repeat_kv: what the trace and every view see), else [Hkv, rows, d] (what the K/V cache stores).
struct QkvHeads
{
    Tensor q, k, v;
};
QkvHeads splitQkv(const Tensor &qkv, const ModelConfig &c, bool repeatKv);
// The split's formulas for Q_h, K_h and V_h.
struct QkvSplitFormulas
{
    std::string q, k, v;
};
QkvSplitFormulas splitFormulas(const ModelConfig &c);
// The gradients of the qkvParts modules' outputs, from those of the H heads (dq, dk, dv [H, rows, d]): a shared K/V
// head's is the sum of its query heads'.
std::vector<Tensor> qkvGradients(const Tensor &dq, const Tensor &dk, const Tensor &dv, const ModelConfig &c);

// One head's columns of the Q/K/V projection for the rows x (rows, D): which = 0 the queries of query head `head`,
// 1 the keys and 2 the values of K/V head `head`; out is (rows, d), the bias's columns included. What projectQkv and
// splitQkv give for that head, computed from its own columns alone (circuit analysis feeds each head its own input).
void projectHead(Tensor &out, const Tensor &x, const ModelConfig &c, const BlockWeights &b, int which, int64_t head);
// Its transpose: dx (rows, D) += dy (rows, d) · ∂(projectHead)/∂x.
void projectHeadBackward(
    Tensor &dx, const Tensor &dy, const ModelConfig &c, const BlockWeights &b, int which, int64_t head);
// What head `head` writes into the stream: its context C_h (rows, d) through its rows of the output projection, with
// no bias; out is (rows, D). The heads' writes plus the bias sum to the output projection's output.
void headWrite(Tensor &out, ConstMatrixMap context, const ModelConfig &c, const BlockWeights &b, int64_t head);

// The output projection's formula, O = C W_proj + b_proj or C W_oᵀ (+ b_o).
std::string outputFormula(const ModelConfig &c);

// RoPE on adjacent pairs (`rope`) or on the two halves (`rope-half`, GPT-NeoX's and the Llama family's).
ops::RopeStyle ropeStyle(const ModelConfig &c);
// S = QKᵀ · scale: 1/√d, or 1 for the families that do not scale (GPT-Neo, T5).
float scoreScale(const ModelConfig &c);

} // namespace atlas
