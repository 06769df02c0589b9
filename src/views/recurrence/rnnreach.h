#pragma once

#include "model/model.h"
#include "trace/trace.h"

#include <Eigen/Core>

#include <atomic>
#include <string>
#include <vector>

// Why attention replaced recurrence (Vaswani et al. 2017, §4): an RNN reaches token j from position i through i − j
// applications of its recurrence, one after another, while a self-attention layer reaches every token in one step,
// for every position at once. This puts an Elman RNN,
//   h_t = tanh(W h_{t−1} + U x_t),   h_{−1} = 0,
// on the very vectors a block's attention reads, beside that block's head, and measures how far each reaches:
//   ∂h_i/∂x_j = D_i W D_{i−1} W ⋯ W D_j U,   D_t = diag(1 − h_t²),
// whose Frobenius norm is at most ‖W‖₂^(i−j) ‖U‖_F, as |tanh′| ≤ 1 (Bengio et al. 1994; Pascanu et al. 2013). With
// ‖W‖₂ = ρ < 1 the reach of a distant token falls geometrically, and no training of W can lift that bound, only keep
// ρ near 1 (which LSTMs' gates do by other means). The path stays i − j steps long either way.
namespace atlas {

struct AnalysisProgress;

using RnnMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The RNN's weights: W [n, n] and U [n, d].
struct RnnWeights
{
    RnnMatrix recurrent, input;
};

// The RNN the view runs: n = min(d, kMaxRnnWidth) hidden units, W = ρ·Q with Q orthogonal (so ‖W‖₂ = ρ exactly) and
// U with entries N(0, 1/d) (so U x has entries of about x's RMS), both drawn from a Gaussian seeded with `seed`.
// Untrained: the bound above holds for every W of that norm, trained or not.
inline constexpr int kMaxRnnWidth = 128;
RnnWeights drawRnn(int width, double radius, uint64_t seed = 1);

struct RnnReach
{
    int tokens = 0, width = 0, hidden = 0; // T, d and n
    int query = 0; // i: the position whose state is followed back
    double radius = 0; // ‖W‖₂ (ρ)
    RnnMatrix states; // [T, n] h_t
    // Per token j ≤ i: log₁₀ ‖∂h_i/∂x_j‖_F, and log₁₀ of its bound (i − j)·log₁₀ ρ + log₁₀ ‖U‖_F. Logarithms, as
    // the norms leave double's range after a few thousand steps at small or large ρ. Tokens after i: none (NaN).
    std::vector<double> log10Reach, log10Bound;
    double meanSlope = 0; // mean of 1 − h_t² over t ≤ i and the units: how much tanh shrinks a step besides W
};

// Runs the RNN over x [T, d] and follows h_`query` back to every x_j. Throws atlas::Error for weights of the wrong
// shape, a query outside 0..T−1, or when `cancel` is set. Work: 2·n³ multiply–adds per token back from the query;
// `progress`, when given, counts those tokens.
RnnReach rnnReach(const RnnWeights &weights, const RnnMatrix &x, int query, const std::atomic<bool> *cancel = nullptr,
    AnalysisProgress *progress = nullptr);

// The view's whole analysis: the RNN run on block `layer`'s attention input, beside head `head` of that block.
struct RecurrenceComparison
{
    int layer = 0, head = 0, blocks = 0; // blocks: L, the model's
    std::string input; // the trace tensor both read
    RnnReach rnn;
    std::vector<float> attention; // head's weights on row i over every key
    int strongestKey = 0; // the key the head weights most from row i (the first of equals)
    // Multiply–adds of one pass over the sequence, and how many of them must run one after another: the RNN's
    // T·(n² + n·d) in T dependent steps; one attention layer's projections 4·T·d² plus scores and weighted sum 2·T²·d,
    // all rows at once.
    double rnnWork = 0, attentionWork = 0;
};

// `query` −1 is the last token; `radius` ρ in (0, kMaxRnnRadius]. Throws atlas::Error naming a tensor the trace does
// not hold, a model with two stacks, or a ρ or query out of range.
inline constexpr double kMaxRnnRadius = 4.0;
RecurrenceComparison compareRecurrence(const Model &model, const Trace &trace, int layer, int head, int query,
    double radius, const std::vector<int> &padding = {}, const std::atomic<bool> *cancel = nullptr,
    AnalysisProgress *progress = nullptr);

} // namespace atlas
