#pragma once

#include "attention/attentionresult.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

// One head under a low-rank or kernel approximation of softmax attention (Linformer's k, Performer's number of
// random features) for a list of sizes, against exact softmax attention on the same q, k, v and options: how
// the error shrinks as the approximation grows. Random projections vary, so every size runs with several seeds
// (0 … seeds−1) and each error is reported as its mean, min and max across the seeds.
//
// Errors of one run (kernelcomparison.h defines the first three; compareKernels computes them):
//   max |ΔC|, mean |ΔC|  over the T×d entries of the context C
//   KL                   mean over query rows of KL(exact_i || approx_i), nats (negative weights clamped to 0)
//   row L1               mean over query rows of Σ_j |w_ij − p_ij|: 0 for equal rows, 2 for disjoint rows that
//                        sum to 1; Linformer's P·E is not a distribution (entries can be negative or above 1),
//                        so its rows can be further apart than 2
// The weight errors (KL, row L1) need every run's (T,T) weights, O(T²) memory: they are computed for
// T <= kMaxDenseSweepTokens only. Above it the sweep computes the context errors alone (no (T,T) matrix).
namespace atlas::attention {

constexpr int64_t kMaxDenseSweepTokens = 1024;

struct SweepStat
{
    double mean = 0, min = 0, max = 0; // across seeds
};

struct ApproximationSweepOptions
{
    std::string kernel = "linformer"; // linformer | performer
    std::vector<int> values; // k (linformer) or features (performer); empty: defaultSweepValues(kernel, T)
    int seeds = 5; // runs per value, with seeds 0 … seeds−1
    bool identity = false; // linformer: projection=identity (E = I, needs every value = T; then it is exact)
    bool causal = false; // performer only: linformer cannot be causal and throws
    std::vector<int> padding; // key positions no query may attend, each in [0, T)
    bool keepWeights = true; // keep seed 0's (T,T) effective weights per value (T <= kMaxDenseSweepTokens)
    // Polled between runs: once it is true the sweep stops and returns what it has, with `cancelled` set.
    const std::atomic<bool> *cancel = nullptr;
};

struct ApproximationPoint
{
    int value = 0; // k or features
    SweepStat maxAbsError, meanAbsError; // of the context
    SweepStat rowL1, kl; // of the weights; 0 when the sweep has no weight errors
    Tensor weights; // (T,T) seed 0's effective weights, when kept
};

struct ApproximationSweep
{
    std::string kernel;
    int64_t T = 0, d = 0;
    int seeds = 0;
    bool causal = false;
    bool hasWeightErrors = false; // T <= kMaxDenseSweepTokens
    bool cancelled = false;
    Tensor exactWeights; // (T,T) softmax attention's weights, when the weight errors were computed
    Tensor mask; // (T,T) 1 where query i may attend key j (exact attention's mask), likewise
    std::vector<ApproximationPoint> points; // one per value, in the order given
};

// Linformer: k = 1, 2, 4, … below T, then T. Performer: 8, 16, …, 1024 features (whatever T is).
// Throws atlas::Error for another kernel.
std::vector<int> defaultSweepValues(const std::string &kernel, int64_t T);

// The sweep on one head; q, k, v are (T,d). Throws atlas::Error naming the kernel for an unknown kernel, a
// causal linformer, a value below 1, seeds below 1, a projection that does not fit (identity with k ≠ T) or bad
// inputs (shapes, padding).
ApproximationSweep approximation_sweep(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const ApproximationSweepOptions &options);

// Mean over rows of Σ_j |a_ij − b_ij| for a, b (T,T); rows whose `exact` row has no positive weight are skipped.
double meanRowL1(const Tensor &a, const Tensor &exact);

} // namespace atlas::attention
