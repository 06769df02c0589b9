#pragma once

#include "tensor/tensor.h"

#include <cstdint>
#include <vector>

// Why attention divides by √d. For q and k with independent components of mean 0 and variance 1, q·k = Σᵢ qᵢkᵢ is a
// sum of d terms of variance 1: Var(q·k) = d, so its typical size grows as √d, and softmax of such scores puts
// nearly all weight on one key (its gradient vanishes). Dividing by √d brings the variance back to 1 at every d.
// This module measures both: on random vectors (Monte Carlo, fixed seed) and on one head of a real model.
namespace atlas::attention {

struct DotProductVariance
{
    int dim = 0;
    double variance = 0; // measured Var(q·k) over the samples
    double scaledVariance = 0; // measured Var(q·k / √d)
};

// Var(q·k) and Var(q·k/√d) for q, k ~ N(0, I_d), measured over `samples` independent pairs at each d (seed fixed,
// so a lecture shows the same figure every time).
std::vector<DotProductVariance> randomDotProductVariance(
    const std::vector<int> &dims, int samples = 4000, uint64_t seed = 1);

// One head's scores with and without the division, over the (query, key) pairs the mask allows.
struct HeadScaling
{
    int dim = 0; // d of the head
    int pairs = 0; // allowed (query, key) pairs
    double componentVariance = 0; // mean over components of Var(qᵢ) and Var(kᵢ): 1 for the random model above
    double variance = 0; // Var(q·k) over the allowed pairs
    double scaledVariance = 0; // Var(q·k/√d)
    int query = 0; // the row below
    std::vector<double> scaled; // softmax(q·k/√d) over the keys of `query` (0 where masked): what the model computes
    std::vector<double> unscaled; // softmax(q·k) over the same keys: what it would compute without the division
    double meanMaxScaled = 0; // mean over query rows of the largest weight, with the division
    double meanMaxUnscaled = 0; // the same without it
};

// `q`, `k`: one head's (T, d). Key j is allowed for query i when j ≤ i (causal) and j is not padding. `query` < 0
// means the last one. Throws atlas::Error for mismatched shapes or a query outside 0..T−1.
HeadScaling headScaling(ConstMatrixMap q, ConstMatrixMap k, bool causal, const std::vector<int> &padding, int query);

} // namespace atlas::attention
