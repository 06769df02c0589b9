#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).

#include "model/modelconfig.h"
#include "tensor/tensor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <utility>
#include <vector>

// The operations of a GPT-style transformer in forward/backward pairs, one function per operation (llm.c
// style). Shapes are in the comments (T tokens, D model width, H heads, d = D/H, F FFN width, V vocabulary).
//
// A forward takes its output first, then its inputs; outputs must already have their shape.
// A backward takes the gradients of the forward's inputs first (dinp, dweight, …), then the gradient of
// its output (dout), then the forward's inputs it needs. Every backward ADDS into its gradients (+=), as in
// llm.c: a tensor read twice (the residual stream, the tied wte) collects both contributions, so the caller
// zeroes each gradient once. The sources are split by kind: embedding.cpp, layernorm.cpp, linear.cpp,
// attention.cpp, softmax.cpp, activation.cpp, loss.cpp.
namespace atlas::ops {

// ---- embedding.cpp

// out is (T,D); wte is (V,D); tokens are T ids in [0,V)
void embedding_forward(Tensor &out, const Tensor &wte, const std::vector<int> &tokens);
// dwte is (V,D); dout is (T,D): dwte[tokens[t]] += dout[t] (a repeated token collects every row)
void embedding_backward(Tensor &dwte, const Tensor &dout, const std::vector<int> &tokens);
// out is (T,D): rows 0..T-1 of wpe (context,D)
void positions_learned_forward(Tensor &out, const Tensor &wpe);
// dwpe is (context,D); dout is (T,D): dwpe[0..T) += dout
void positions_learned_backward(Tensor &dwpe, const Tensor &dout);
// out, a, b are all the same shape
void add_forward(Tensor &out, const Tensor &a, const Tensor &b);
// da, db, dout are all the same shape: da += dout, db += dout
void add_backward(Tensor &da, Tensor &db, const Tensor &dout);
// out, a, b are all the same shape: out = a − b (a reversible block's inversion, X₂ = Y₂ − G(Y₁); no backward)
void subtract_forward(Tensor &out, const Tensor &a, const Tensor &b);
// out, a, b are all the same shape: out = (a + b) / 2 (a reversible model's two streams before ln_f)
void average_forward(Tensor &out, const Tensor &a, const Tensor &b);
// da, db, dout are all the same shape: da += dout / 2, db += dout / 2
void average_backward(Tensor &da, Tensor &db, const Tensor &dout);

// ---- positions.cpp: encodings that act inside attention (docs/models.md, "Positions")

// RoPE's two conventions: RoFormer's interleaved pairs (x₂ᵢ, x₂ᵢ₊₁), and GPT-NeoX / LLaMA's rotate-half pairs
// (xᵢ, xᵢ₊d/2). Pair i turns by t·θᵢ at position t, θᵢ = base^(−2i/d).
enum class RopeStyle { Interleaved, RotateHalf };
// θᵢ for pair i of a head of width d
double ropeFrequency(int64_t pair, int64_t d, float base);
// θᵢ = base^(−2i/d) for every pair of a head of width d
std::vector<double> ropeFrequencies(int64_t d, float base);
// out, in are (H,T,d); row t is position firstPosition + t; pair i turns by t·theta[i]. theta has at most d/2 angles;
// with fewer, only the first 2·theta.size() dimensions turn (GPT-NeoX's partial rotary; the rotate-half pairs are
// then (xᵢ, xᵢ₊ₙ), n = theta.size()) and the rest pass through.
// `amplitude` multiplies cos and sin, and so the turned dimensions (LongRoPE's attention factor; 1 elsewhere).
void rope_forward(Tensor &out, const Tensor &in, int64_t firstPosition, RopeStyle style,
    const std::vector<double> &theta, double amplitude = 1.0);
// a·cos and a·sin of t·θᵢ, [T, n] each, for positions firstPosition … firstPosition + T − 1, the n angles θ and the
// amplitude a: computed once, then shared by the queries and keys of every layer.
struct RopeTable
{
    int64_t T = 0, n = 0;
    std::vector<float> cos, sin;
};
RopeTable rope_table(int64_t firstPosition, int64_t T, const std::vector<double> &theta, double amplitude = 1.0);
// As rope_forward above, the angles read from the table (its first T rows).
void rope_forward(Tensor &out, const Tensor &in, RopeStyle style, const RopeTable &table);
// din, dout are (H,T,d) from position 0: din += a·R(−angle) dout
void rope_backward(
    Tensor &din, const Tensor &dout, RopeStyle style, const std::vector<double> &theta, double amplitude = 1.0);
// ALiBi's head slopes (Press et al. 2022), including their rule for a head count that is not a power of two
std::vector<float> alibiSlopes(int heads);
// out is (H,T,K): out[h,i,j] = −m_h |queryOffset + i − j| (causal models mask j > i anyway)
void alibi_bias_forward(Tensor &out, int64_t queryOffset = 0);
// T5's bucket of a key − query distance (Raffel et al. 2020; Hugging Face's _relative_position_bucket)
int t5Bucket(int64_t relative, bool bidirectional, int buckets, int maxDistance);
// out is (H,T,K); table is (buckets,H): out[h,i,j] = table[bucket(j − (queryOffset + i)), h]
void t5_bias_forward(Tensor &out, const Tensor &table, bool bidirectional, int maxDistance, int64_t queryOffset = 0);
// dtable is (buckets,H); dout is (H,T,T): dtable[bucket(j − i), h] += dout[h,i,j]
void t5_bias_backward(Tensor &dtable, const Tensor &dout, bool bidirectional, int maxDistance);
// out is (H,T,K); q is (H,T,d); table is (2·clip+1, d), shared by the heads (Shaw et al. 2018):
// out[h,i,j] = scale · q[h,i] · table[clip(j − (queryOffset + i), −clip, clip) + clip]
// `sign` −1 reads the table by i − j instead (BERT's relative_key: distance_embedding[i − j + max_positions − 1]).
void shaw_bias_forward(
    Tensor &out, const Tensor &q, const Tensor &table, int clip, float scale, int64_t queryOffset = 0, int sign = 1);
// dq, q are (H,T,d); dtable, table are (2·clip+1, d); dout is (H,T,T)
void shaw_bias_backward(Tensor &dq, Tensor &dtable, const Tensor &dout, const Tensor &q, const Tensor &table, int clip,
    float scale, int sign = 1);

// ---- layernorm.cpp

// out, inp are (T,D); weight is (D): out = weight ⊙ x / √(mean(x²) + eps) (RMSNorm, as Llama: no mean, no bias)
void rmsnorm_forward(Tensor &out, const Tensor &inp, const Tensor &weight, float eps);
// dinp, dout, inp are (T,D); dweight, weight are (D). With r = 1/√(mean(x²) + ε) and g = w ⊙ dout:
// dx = r (g − x̂ mean(g ⊙ x̂)), x̂ = r x; dweight += Σ_t dout ⊙ x̂.
void rmsnorm_backward(
    Tensor &dinp, Tensor &dweight, const Tensor &dout, const Tensor &inp, const Tensor &weight, float eps);
// out, inp are (T,D); weight, bias are (D)
void layernorm_forward(Tensor &out, const Tensor &inp, const Tensor &weight, const Tensor &bias, float eps);
// dinp, dout, inp are (T,D); dweight, dbias, weight are (D). Mean and variance are recomputed from inp.
void layernorm_backward(Tensor &dinp, Tensor &dweight, Tensor &dbias, const Tensor &dout, const Tensor &inp,
    const Tensor &weight, float eps);

// ---- linear.cpp

// out is (T,O); inp is (T,I); weight is (O,I), every model's layout (nn.Linear's; a GPT-2 checkpoint's Conv1D (I,O)
// is transposed at load); bias is (O) or empty: out = inp weightᵀ + bias
void linear_forward(Tensor &out, const Tensor &inp, const Tensor &weight, const Tensor &bias);
// The backward of linear_forward: dinp += dout weight, dweight += doutᵀ inp, dbias += Σ_t dout (when bias has one).
void linear_backward(
    Tensor &dinp, Tensor &dweight, Tensor *dbias, const Tensor &dout, const Tensor &inp, const Tensor &weight);
// out is (T,V); inp is (T,D); wte is (V,D): out = inp wteᵀ (output projection tied to the embedding)
void logits_forward(Tensor &out, const Tensor &inp, const Tensor &wte);
// dinp, inp are (T,D); dwte, wte are (V,D); dout is (T,V): dinp += dout wte, dwte += doutᵀ inp
void logits_backward(Tensor &dinp, Tensor &dwte, const Tensor &dout, const Tensor &inp, const Tensor &wte);

// ---- attention.cpp

// q, k, v are (H,T,d); qkv is (T,3D) with columns Q | K | V, each split into H blocks of d
void split_heads_forward(Tensor &q, Tensor &k, Tensor &v, const Tensor &qkv, int heads);
// dqkv is (T,3D); dq, dk, dv are (H,T,d)
void split_heads_backward(Tensor &dqkv, const Tensor &dq, const Tensor &dk, const Tensor &dv);
// The same for any number of parts: x is (T, P·D) with P column blocks, each part (H,T,d) (cross-attention splits
// its queries alone, P = 1, and its keys | values, P = 2)
void split_heads_forward(const std::vector<Tensor *> &parts, const Tensor &x, int heads);
void split_heads_backward(Tensor &dx, const std::vector<const Tensor *> &dparts);
// out is (H,T,S); q is (H,T,d), k is (H,S,d): out[h] = q[h] k[h]^T * scale (S = T in self-attention)
void attention_scores_forward(Tensor &out, const Tensor &q, const Tensor &k, float scale);
// dq, q are (H,T,d); dk, k are (H,S,d); dout is (H,T,S): dq[h] += scale dout[h] k[h], dk[h] += scale dout[h]ᵀ q[h]
void attention_scores_backward(
    Tensor &dq, Tensor &dk, const Tensor &dout, const Tensor &q, const Tensor &k, float scale);
// out, scores are (H,T,S): out = scores where query i may attend key j (j <= i when causal, then S = T; j not
// padding), else -inf
void attention_mask_forward(Tensor &out, const Tensor &scores, bool causal, const std::vector<int> &padding);
// scores is (H,T,T), already causally masked: key j is also masked when j ≤ i − window (Mistral's sliding window: each
// query sees its `window` latest positions, itself included)
void sliding_window_mask(Tensor &scores, int window);
// dscores, dout are (H,T,S): dscores += dout on the allowed cells; a masked cell gets no gradient
void attention_mask_backward(Tensor &dscores, const Tensor &dout, bool causal, const std::vector<int> &padding);
// out is (H,T,d); probs is (H,T,S); v is (H,S,d)
void attention_context_forward(Tensor &out, const Tensor &probs, const Tensor &v);
// dprobs, probs are (H,T,S); dv, v are (H,S,d); dout is (H,T,d): dprobs[h] += dout[h] v[h]ᵀ, dv[h] += probs[h]ᵀ dout[h]
void attention_context_backward(Tensor &dprobs, Tensor &dv, const Tensor &dout, const Tensor &probs, const Tensor &v);
// out is (T,D); ctx is (H,T,d)
void merge_heads_forward(Tensor &out, const Tensor &ctx);
// dctx is (H,T,d); dout is (T,D)
void merge_heads_backward(Tensor &dctx, const Tensor &dout);

// ---- tiledattention.cpp: softmax attention without a T × T buffer (FlashAttention's order, Dao et al. 2022)

// Which keys query i sees and how its scores are formed: one rule for the tiled forward and for every readout of
// its probabilities, so that a readout recomputes exactly what the forward weighed.
struct ScoreRule
{
    float scale = 1; // S = (scale · Q) Kᵀ, as attention_scores_forward
    float softcap = 0; // > 0: S_c = c · tanh(S / c) before the mask (Gemma 2)
    bool causal = true; // key j ≤ query i (then as many keys as queries)
    int window = 0; // > 0: also j > i − window (a sliding window, the query itself included)
    std::vector<int> padding; // keys no query sees
    std::vector<float> sinks; // empty, or a learned logit per head that joins every row's softmax (gpt-oss)

    int64_t firstKey(int64_t i) const { return window > 0 ? std::max<int64_t>(0, i - window + 1) : 0; }
    int64_t endKey(int64_t i, int64_t keys) const { return causal ? std::min(i + 1, keys) : keys; }
};
// q is (H,T,d), k and v (H,S,d): context (H,T,d) = softmax(mask(S)) V and lse (H,T), each row's log-sum-exp
// ℓᵢ = log(Σⱼ exp(S′ᵢⱼ) [+ exp(z_h)]), computed a tile of queries × a tile of keys at a time with a running maximum;
// tiles every query of a tile has masked are skipped. A row with no key (and no sink) gets context 0 and ℓ = −∞.
void tiled_attention_forward(
    Tensor &context, Tensor &lse, const Tensor &q, const Tensor &k, const Tensor &v, const ScoreRule &rule);
// What one stage of the score path holds at head h's rows [r0, r1) × keys [c0, c1), recomputed from q and k (and
// lse for Probs) under `rule`: the scores S, the capped S_c, the masked S′ (−∞ where masked) or the probabilities
// exp(S′ᵢⱼ − ℓᵢ); Mask is the rule alone, 0 where the query sees the key and −∞ where not, with no product.
// `out` holds (r1 − r0) rows of `stride` floats.
enum class ScoreStage { Scores, Capped, Masked, Probs, Mask };
void attention_tile(float *out, int64_t stride, ScoreStage stage, const Tensor &q, const Tensor &k, const Tensor &lse,
    const ScoreRule &rule, int64_t h, int64_t r0, int64_t r1, int64_t c0, int64_t c1);

// Which cells a pooling covers and how it groups them: rows [row0, row1) × columns [col0, col1) of a geometry whose
// column j + firstColumn is key j (a caller's own column, such as a sink's, may come before the keys), in blocks of
// blockRows × blockCols counted from (row0, col0).
struct PoolGrid
{
    int64_t row0 = 0, row1 = 0, col0 = 0, col1 = 0;
    int blockRows = 1, blockCols = 1, firstColumn = 0;

    int64_t rows() const { return (row1 - row0 + blockRows - 1) / blockRows; }
    int64_t cols() const { return (col1 - col0 + blockCols - 1) / blockCols; }
};
// Head h's `stage` mean-pooled for display without a T × S buffer: for every block of the grid, the sum of its cells
// into `sums` and how many were counted into `counts` (both [grid.rows(), grid.cols()], zeroed here). Stages: Scores
// or Capped (every cell), Probs (exp(S′ᵢⱼ − ℓᵢ)) and Mask (no product: sums stay 0, so a block is 0 where counted
// and −∞ where not). `cells` says which are counted: Seen, the cells the rule lets their query see (Probs and Mask;
// a block of none is drawn masked), or All (a masked probability counted as its 0). Each column is summed down its
// block's rows, then the block's columns left to right, as downsample sums a whole matrix. Returns false, leaving
// the sums partial, when `cancel` is set part-way.
enum class PoolCells { Seen, All };
bool attention_pool(float *sums, float *counts, ScoreStage stage, PoolCells cells, const Tensor &q, const Tensor &k,
    const Tensor &lse, const ScoreRule &rule, int64_t h, const PoolGrid &grid,
    const std::atomic<bool> *cancel = nullptr);

// ---- softmax.cpp

// out, inp are (..., N): softmax over the last axis; a row that is all -inf becomes all 0
void softmax_forward(Tensor &out, const Tensor &inp);
// dinp, dout, out are (..., N); out is the forward's output: dinp += out ⊙ (dout − Σ_k dout_k out_k).
// A cell whose probability is 0 (masked, or a row with no allowed key) gets no gradient.
void softmax_backward(Tensor &dinp, const Tensor &dout, const Tensor &out);
// Attention sinks (gpt-oss; Xiao et al. 2023's learned form): inp, out are (H, ..., N), sinks (H): each row's softmax
// over its N scores and head h's sink logit z_h, the sink's column dropped, so a row sums to 1 − its sink share
// exp(z_h) / (Σ exp(s) + exp(z_h)), written to sinkShare (H, rows per head). A row with every key masked gives the sink
// all the weight.
void sink_softmax_forward(Tensor &out, Tensor &sinkShare, const Tensor &inp, const Tensor &sinks);
// dinp += out ⊙ (dout − Σ_k dout_k out_k) as softmax's; dsinks[h] += Σ over head h's rows of −share · Σ_k dout_k out_k.
void sink_softmax_backward(
    Tensor &dinp, Tensor &dsinks, const Tensor &dout, const Tensor &out, const Tensor &sinkShare);

// ---- entmax.cpp: sparse normalisers (Martins & Astudillo 2016; Peters, Niculae & Martins 2019; Correia et al. 2019)

// out, inp are (..., N): sparsemax over the last axis, the Euclidean projection of each row onto the simplex, exact
// (sort-based). Cells far below the row's top get exactly 0; −∞ cells (masked) get 0; a row all −∞ is all 0.
void sparsemax_forward(Tensor &out, const Tensor &inp);
// α-entmax over the last axis, α in (1, 2]: p_i = [(α−1) z_i − τ]₊^{1/(α−1)}, τ found by bisection so that Σ p = 1
// (α = 2 is sparsemax, computed exactly; α → 1 tends to softmax). alpha holds one value for every row, or one per
// leading slice (the heads of an (H,T,T) tensor).
void entmax_forward(Tensor &out, const Tensor &inp, const std::vector<float> &alpha);
// dinp += ∂p/∂z ᵀ dout, with ∂p/∂z = diag(s) − s sᵀ / Σ s, s_i = p_i^{2−α} on the support (0 off it); and when dalpha
// is given, dalpha[h] += Σ over its rows of dout · ∂p/∂α. out is the forward's output. Sparsemax's backward is α = 2.
void entmax_backward(
    Tensor &dinp, std::vector<float> *dalpha, const Tensor &dout, const Tensor &out, const std::vector<float> &alpha);

// ---- adaptivespan.cpp: adaptive attention span (Sukhbaatar et al. 2019)

// The soft mask of a head with span z at distance x = i − j: m_z(x) = clamp((R + z − x) / R, 0, 1), 1 up to z, a ramp
// of width R, 0 beyond z + R.
float span_ramp_value(float z, float ramp, int64_t distance);
// mask is (H,T,T): mask[h,i,j] = m_{z_h}(i − j) for keys j ≤ i, 0 for later keys; spans holds z_h for each head.
void span_mask_forward(Tensor &mask, const std::vector<float> &spans, float ramp);
// out, inp, mask are (..., N): a_j = m_j exp(s_j) / Σ_k m_k exp(s_k) over the last axis (the paper's eq. 3: softmax,
// the mask, and renormalised); −∞ cells and m = 0 cells get exactly 0, a row with nothing in reach is all 0.
void span_softmax_forward(Tensor &out, const Tensor &inp, const Tensor &mask);
// out, dout, mask, dinp are (H, ..., N): dinp += a ⊙ (dout − Σ_k dout_k a_k), as softmax's; and dspans[h] (one per
// head) += ∂L/∂z_h = Σ over head h's cells on the ramp (0 < m < 1, where ∂m/∂z = 1/R) of (a_j / m_j)(dout_j − Σ_k
// dout_k a_k) / R. Off the ramp the mask is flat in z.
void span_softmax_backward(
    Tensor &dinp, std::vector<float> &dspans, const Tensor &dout, const Tensor &out, const Tensor &mask, float ramp);

// ---- fourier.cpp: FNet's token mixing (Lee-Thorp et al. 2021; ModelConfig::fourierLayers)

// cosine and sine become [size, size]: cos and sin of 2π·jk/length, j and k < size ≤ length (the top-left corner of
// the real and the negated imaginary part of the length-point DFT matrix, F = C − iS).
void dft_parts(MatrixRM &cosine, MatrixRM &sine, int64_t size, int64_t length);
// x and out are (T,D): out = Re(F_N X̃ F_D)'s first T rows, X̃ being x with zero rows added up to `length` N ≥ T, that
// is out = C X C_D − S X S_D with C, S = dft_parts(T, N) and C_D, S_D = dft_parts(D, D). FNet's sub-layer is N = T;
// a model mixes over its context N, so that a shorter text is mixed as the training windows were. Every one of the
// four matrices is symmetric, so the map is its own adjoint: the same call turns out's gradient into x's.
void fourier_mix_forward(Tensor &out, const Tensor &x, int64_t length);

// ---- adaptivecomputation.cpp: adaptive computation time over the blocks (Graves 2016; ModelConfig::act)

// states are the L streams X_1 … X_L (T,D) after each block; w (1,D) and b (1) the halting unit. For each token:
// h_n = σ(w · X_n + b) for every n; N the first block where h_1 + … + h_N ≥ 1 − ε (L at the latest); p_n = h_n for
// n < N, the remainder R = 1 − Σ_{n<N} h_n at N, 0 after. halting and weights are (T,L) (h and p), steps (T) holds
// N, ponder (T) N + R, out (T,D) Σ_n p_n X_n.
void act_forward(Tensor &halting, Tensor &weights, Tensor &steps, Tensor &ponder, Tensor &out,
    const std::vector<const Tensor *> &states, const Tensor &w, const Tensor &b, float epsilon);
// dstates are L (T,D) gradients, added into; dponder is ∂loss/∂ponder_t, the same for every token (τ / T). With
// g_n = dout · X_n: dX_n += p_n dout, and for n < N, ∂/∂h_n = g_n − g_N − dponder (R = 1 − Σ_{n<N} h_n) through
// σ' = h(1 − h) into dX_n, dw and db. h_N only decides N, which has no gradient, as in the paper.
void act_backward(const std::vector<Tensor *> &dstates, Tensor &dw, Tensor &db, const Tensor &dout, float dponder,
    const std::vector<const Tensor *> &states, const Tensor &w, const Tensor &halting, const Tensor &weights,
    const Tensor &steps);

// ---- activation.cpp

// Gemma 2's soft-cap of one value, cap · tanh(u / cap): every path that caps a score or a logit computes it here.
inline float softcapped(float u, float cap)
{
    return cap * std::tanh(u / cap);
}
// out, inp same shape: softcapped(u, cap) for each element
void softcap_forward(Tensor &out, const Tensor &inp, float cap);
// dinp, dout, out same shape: dinp += dout (1 − (out / cap)²), from the capped values
void softcap_backward(Tensor &dinp, const Tensor &dout, const Tensor &out, float cap);

// out, inp same shape: 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))
void gelu_tanh_forward(Tensor &out, const Tensor &inp);
// dinp, dout, inp same shape
void gelu_tanh_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp);
// out, inp same shape: 0.5 u (1 + erf(u / sqrt(2)))
void gelu_erf_forward(Tensor &out, const Tensor &inp);
// dinp, dout, inp same shape: dinp += dout (Φ(u) + u φ(u))
void gelu_erf_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp);
// out, inp same shape: max(0, u)
void relu_forward(Tensor &out, const Tensor &inp);
// dinp, dout, inp same shape: dinp += dout where u > 0 (0 at u = 0, as PyTorch)
void relu_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp);

// out, inp same shape: u σ(u) = u / (1 + e^(−u)) (SiLU, Swish with β = 1)
void silu_forward(Tensor &out, const Tensor &inp);
// dinp, dout, inp same shape: dinp += dout σ(u)(1 + u(1 − σ(u)))
void silu_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp);
// out, inp same shape: u σ(1.702 u) (quick GELU)
void quick_gelu_forward(Tensor &out, const Tensor &inp);
// dinp += dout (σ(αu) + αu σ(αu)(1 − σ(αu))), α = 1.702
void quick_gelu_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp);
// out, gate, up same shape: out = act(gate) ⊙ up (a gated linear unit; SwiGLU with SiLU, Shazeer 2020). With a
// `clamp` l > 0, gpt-oss's form: out = act(min(gate, l)) ⊙ (clamp(up, −l, l) + 1).
void gated_activation_forward(
    Tensor &out, const Tensor &gate, const Tensor &up, Activation activation, float clamp = 0.0f);

// The backward of gated_activation_forward: dgate += dout ⊙ up ⊙ act′(gate), dup += dout ⊙ act(gate); clamped, the
// clamped values in their place and no gradient where a clamp holds (as PyTorch's clamp: the ends pass it).
void gated_activation_backward(Tensor &dgate, Tensor &dup, const Tensor &dout, const Tensor &gate, const Tensor &up,
    Activation activation, float clamp = 0.0f);

// out, inp same shape: the model's activation (ReLU, tanh GELU, erf GELU or SiLU)
void activation_forward(Tensor &out, const Tensor &inp, Activation activation);
// dinp, dout, inp same shape: dinp += dout · act′(inp)
void activation_backward(Tensor &dinp, const Tensor &dout, const Tensor &inp, Activation activation);

// ---- ffn.cpp: the feed-forward sub-layer's weights, and its chunks of rows (Reformer, Kitaev et al. 2020; the
// chunked sub-layer itself is engine/feedforward.h)

// The FFN's weights: fcWeight (F,D), fcBias (F), projWeight (D,F), projBias (D).
struct FfnWeights
{
    const Tensor &fcWeight, &fcBias, &projWeight, &projBias;
    Activation activation;
};
struct FfnGradients
{
    Tensor &fcWeight, &fcBias, &projWeight, &projBias;
};
// Rows [begin, end) of chunk `chunk` of `chunks` over T rows: ⌈T/chunks⌉ rows each, the last one shorter.
std::pair<int64_t, int64_t> chunk_rows(int64_t T, int chunks, int chunk);

// ---- moe.cpp: Switch Transformer routing (Fedus et al. 2021; docs/models.md, "Mixture of experts")

// Tokens each expert may take: ⌈factor · tokens / experts⌉, at least 1.
int64_t expert_capacity(double factor, int64_t tokens, int experts);
// probs (T,E) the router's softmax; choice, gate (T,K) for top-K routing. choice[t,r] is token t's r-th most
// probable expert (the lower index on a tie), or −1 when that expert was already full; gate[t,r] is its router
// probability (0 when dropped). Buffers fill rank by rank, every token's first choice before any second one
// (GShard), and within a rank in sequence order: the dropped tokens are exactly each expert's overflow.
void router_route(Tensor &choice, Tensor &gate, const Tensor &probs, int64_t capacity);
// [T·K]: each token's K most probable experts, most probable first (the lower index on a tie).
std::vector<int> router_ranking(const Tensor &probs, int64_t K);
// Pᵢ, the mean router probability of expert i over the T tokens.
std::vector<float> router_mean_probs(const Tensor &probs);
// fᵢ, the fraction of the T tokens whose most probable expert is i (before any drop).
std::vector<float> router_top1_fractions(const Tensor &probs);
// Switch's load-balancing loss E · Σᵢ fᵢ · Pᵢ, Pᵢ the mean router probability of expert i. 1 when balanced.
float router_aux_loss(const Tensor &probs);
// dprobs += coef · ∂(E Σᵢ fᵢ Pᵢ)/∂probs = coef · E · fᵢ / T (f is a count: no gradient flows through it).
void router_aux_loss_backward(Tensor &dprobs, const Tensor &probs, float coef);
// The router z-loss (ST-MoE, Zoph et al. 2022): (1/T) Σ_t (log Σᵢ exp(logits_ti))².
float router_z_loss(const Tensor &logits);
// dlogits += coef · 2 z_t softmax(logits_t) / T; probs = softmax(logits).
void router_z_loss_backward(Tensor &dlogits, const Tensor &logits, const Tensor &probs, float coef);
// x, out (T,D): out_t = Σ_r gate[t,r] · FFN_choice[t,r](x_t) over the kept choices (0 for a token every expert
// dropped: the residual carries it). experts[e] are expert e's weights.
void moe_forward(
    Tensor &out, const Tensor &x, const Tensor &choice, const Tensor &gate, const std::vector<FfnWeights> &experts);
// A gated expert in nn.Linear layout (Mixtral's w1, w3, w2): y = (act(x gateᵀ) ⊙ x upᵀ) downᵀ.
struct GatedExpertWeights
{
    const Tensor &gate, &up, &down; // [F, D], [F, D], [D, F]
    Activation activation;
};
// moe_forward with gated experts: out_t = Σ_r gate[t,r] · y_choice[t,r](x_t) over the kept choices.
void moe_gated_forward(Tensor &out, const Tensor &x, const Tensor &choice, const Tensor &gate,
    const std::vector<GatedExpertWeights> &experts);
// Adds into dx (T,D), dgate (T,K) and each expert's gradients; recomputes each expert on its rows.
void moe_backward(Tensor &dx, Tensor &dgate, const std::vector<FfnGradients> &g, const Tensor &dout, const Tensor &x,
    const Tensor &choice, const Tensor &gate, const std::vector<FfnWeights> &experts);
struct GatedExpertGradients
{
    Tensor &gate, &up, &down;
};
// moe_backward with gated experts (no biases).
void moe_gated_backward(Tensor &dx, Tensor &dgate, const std::vector<GatedExpertGradients> &g, const Tensor &dout,
    const Tensor &x, const Tensor &choice, const Tensor &gate, const std::vector<GatedExpertWeights> &experts);
// gpt-oss's experts, stacked: gateUp [E, D, 2F] (x W: gate in the even columns, up in the odd), gateUpBias [E, 2F],
// down [E, F, D], downBias [E, D]; y_e(x) = (act(min(g, l)) ⊙ (clamp(u, −l, l) + 1)) down_e + b_e with
// [g u] = x gateUp_e + b.
struct StackedExperts
{
    const Tensor &gateUp, &gateUpBias, &down, &downBias;
    Activation activation;
    float clamp;
};
struct StackedExpertGradients
{
    Tensor &gateUp, &gateUpBias, &down, &downBias;
};
// out_t = Σ_r gate[t,r] · y_choice[t,r](x_t).
void moe_stacked_forward(
    Tensor &out, const Tensor &x, const Tensor &choice, const Tensor &gate, const StackedExperts &experts);
// Adds into dx (T,D), dgate (T,K) and the stacked gradients; recomputes each expert on its rows.
void moe_stacked_backward(Tensor &dx, Tensor &dgate, const StackedExpertGradients &g, const Tensor &dout,
    const Tensor &x, const Tensor &choice, const Tensor &gate, const StackedExperts &experts);
// Mixtral's gates g_r = p_r / Σ_k p_k over the chosen experts (every choice kept): turns dgate (T,K), the gradient of
// the renormalised gates, into the gradient of the chosen probabilities p_r, in place, for router_gate_backward.
void router_renormalised_gate_backward(Tensor &dgate, const Tensor &gate, const Tensor &choice, const Tensor &probs);
// dprobs (T,E) += dgate (T,K) at each kept choice: gate[t,r] = probs[t, choice[t,r]].
void router_gate_backward(Tensor &dprobs, const Tensor &dgate, const Tensor &choice);

// ---- funnel.cpp: Funnel-Transformer's pooling (Dai et al. 2020; model/funnel.h). Tensors stay (T, D); a position t
// is present at stride s when t mod s = 0, and a pooled token keeps the position of its first member.

// out[t] = (x[t] + x[t + s/2]) / 2 for t present at stride s (x[t] alone when t + s/2 ≥ T), 0 at the other positions.
void funnel_pool_forward(Tensor &out, const Tensor &x, int stride);
// dx[t] += dout[t] / 2 and dx[t + s/2] += dout[t] / 2 at the present t (all of dout[t] when alone).
void funnel_pool_backward(Tensor &dx, const Tensor &dout, int stride);
// out[t] = compressed[t − t mod s] + skip[t]: each compressed token repeated over the s positions it covers.
void funnel_upsample_forward(Tensor &out, const Tensor &compressed, const Tensor &skip, int stride);
// dcompressed[t − t mod s] += dout[t], dskip[t] += dout[t].
void funnel_upsample_backward(Tensor &dcompressed, Tensor &dskip, const Tensor &dout, int stride);
// Scores (H, T, T): key j gets −∞ unless j mod s = 0.
void funnel_mask_keys(Tensor &scores, int stride);

// ---- loss.cpp

// losses is (T); logits is (T,V); targets are T ids in [0,V) or -1 (not counted). losses[t] is
// −log softmax(logits[t])[targets[t]] (0 where the target is -1); returns their mean over the counted
// positions (0 when none is counted).
float crossentropy_forward(Tensor &losses, const Tensor &logits, const std::vector<int> &targets);
// dlogits, probs are (T,V); probs = softmax(logits) (the trace's next_probs). The gradient of the mean loss
// through the softmax, fused: dlogits[t] += (probs[t] − onehot(targets[t])) / N, N the counted positions.
void crossentropy_softmax_backward(Tensor &dlogits, const Tensor &probs, const std::vector<int> &targets);

} // namespace atlas::ops
