#pragma once

#include "attention/attentionkernel.h"

#include <string>
#include <vector>

// One head under every attention kernel, against full attention: what each kernel does to the weights and how
// far its output moves. For teaching at small T: every kernel runs dense (T,T weights), O(T²) memory each.
//
// Errors, per kernel, against full attention on the same q, k, v and options:
//   max |ΔC|, mean |ΔC|  over the T×d entries of the context (output) C
//   KL                   mean over query rows i of KL(full_i || kernel_i), in nats
// Zero weights: a kernel that never lets query i see key j has w_ij = 0, and KL(p || q) is infinite wherever
// p_j > 0 = q_j. So wherever p_j > 0 the kernel's weight is raised to at least ε = 1e-9, and the kernel row is
// renormalised to sum 1 before the KL: a key the kernel drops costs about p_j·ln(p_j/ε) (≈ 20.7·p_j nats)
// instead of infinity, and a row equal to full attention's gives exactly 0. Negative entries (linformer's
// effective weights P·E can be) are clamped to 0 first. Query rows whose full row has no weight at all (every
// key padded) are left out of the mean.
namespace atlas::attention {

constexpr double kKlEpsilon = 1e-9;

struct KernelComparisonEntry
{
    AttentionKernelSpec spec;
    std::string description; // describeAttentionKernel(spec)
    bool skipped = false; // not run; `reason` says why (linformer when causal, or the kernel's own error)
    std::string reason;
    Tensor weights; // (T,T) effective weights, dense
    Tensor mask; // (T,T) 1 where query i may attend key j
    double maxAbsError = 0; // max |C_kernel − C_full|
    double meanAbsError = 0; // mean |C_kernel − C_full|
    double meanKl = 0; // mean over query rows of KL(full_i || kernel_i), nats
    // Mean over query rows of the share of full attention's weight that falls on keys outside the kernel's
    // mask: what the pattern cannot see at all (0 for dense approximations such as Performer).
    double meanDroppedWeight = 0;
};

// Every kind with small classroom parameters suited to T (see kernelcomparison.cpp); linformer's k = max(1, T/2).
std::vector<AttentionKernelSpec> defaultComparisonKernels(int64_t T);

// KL(p || q) of one row of n weights, with q regularised as documented above (p is renormalised to sum 1).
// Returns NaN when p has no positive weight.
double klDivergenceRow(const float *p, const float *q, int64_t n);

// Runs every spec (dense) on one head; q, k, v are (T,d). Entry 0 is always full attention (added first when
// `kernels` does not start with it). Throws atlas::Error for bad inputs; a kernel that cannot run is skipped.
std::vector<KernelComparisonEntry> compareKernels(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, bool causal,
    const std::vector<int> &padding, std::vector<AttentionKernelSpec> kernels = {});

} // namespace atlas::attention
