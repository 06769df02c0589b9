#include "attention/kernelcomparison.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace atlas::attention {

namespace {

AttentionKernelSpec spec(const std::string &kind, const std::vector<std::string> &keyValues)
{
    return parseAttentionKernelSpec(kind, keyValues);
}

// Fills in a kernel's errors against full attention. context and fullContext are (T,d); weights and full (T,T).
void measure(KernelComparisonEntry &entry, const Tensor &context, const Tensor &fullContext, const Tensor &full)
{
    double maxError = 0, sumError = 0;
    for (int64_t i = 0; i < context.numel(); ++i) {
        const double e = std::abs(double(context.data()[i]) - double(fullContext.data()[i]));
        maxError = std::max(maxError, e);
        sumError += e;
    }
    entry.maxAbsError = maxError;
    entry.meanAbsError = context.numel() > 0 ? sumError / double(context.numel()) : 0.0;
    const int64_t T = full.dim(0);
    double sumKl = 0, sumDropped = 0;
    int64_t rows = 0;
    for (int64_t i = 0; i < T; ++i) {
        const double kl = klDivergenceRow(full.data() + i * T, entry.weights.data() + i * T, T);
        if (std::isnan(kl))
            continue;
        sumKl += kl;
        for (int64_t j = 0; j < T; ++j)
            if (entry.mask.data()[i * T + j] == 0.0f)
                sumDropped += full.data()[i * T + j];
        ++rows;
    }
    entry.meanKl = rows > 0 ? sumKl / double(rows) : 0.0;
    entry.meanDroppedWeight = rows > 0 ? sumDropped / double(rows) : 0.0;
}

} // namespace

std::vector<AttentionKernelSpec> defaultComparisonKernels(int64_t T)
{
    std::vector<AttentionKernelSpec> kernels;
    for (const AttentionKernelKind &kind : attentionKernels())
        kernels.push_back(spec(kind.kind, kind.compared ? kind.compared(T) : std::vector<std::string> {}));
    return kernels;
}

double klDivergenceRow(const float *p, const float *q, int64_t n)
{
    // q̃_j = max(q_j, ε) where p_j > 0, max(q_j, 0) elsewhere, then renormalised: identical rows give exactly 0.
    double pSum = 0, qSum = 0;
    for (int64_t j = 0; j < n; ++j) {
        const double pj = std::max(0.0, double(p[j])), qj = std::max(0.0, double(q[j]));
        pSum += pj;
        qSum += pj > 0 ? std::max(qj, kKlEpsilon) : qj;
    }
    if (!(pSum > 0))
        return std::numeric_limits<double>::quiet_NaN();
    double kl = 0;
    for (int64_t j = 0; j < n; ++j) {
        const double pj = std::max(0.0, double(p[j])) / pSum;
        if (pj <= 0)
            continue; // 0 · log(0 / q) = 0
        const double qj = std::max(kKlEpsilon, double(q[j])) / qSum;
        kl += pj * std::log(pj / qj);
    }
    return std::max(0.0, kl); // rounding can leave −1e-17
}

std::vector<KernelComparisonEntry> compareKernels(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, bool causal,
    const std::vector<int> &padding, std::vector<AttentionKernelSpec> kernels)
{
    AttentionOptions options;
    options.causal = causal;
    options.padding = padding;
    options.dense = true;
    checkHeadInputs("comparison", q, k, v, options);
    if (kernels.empty())
        kernels = defaultComparisonKernels(q.rows());
    if (!isExactAttention(kernels.front()))
        kernels.insert(kernels.begin(), spec("full", {}));
    const AttentionResult full = attention_kernel_forward(kernels.front(), q, k, v, options);
    std::vector<KernelComparisonEntry> entries;
    for (const AttentionKernelSpec &s : kernels) {
        KernelComparisonEntry entry;
        entry.spec = s;
        entry.description = describeAttentionKernel(s);
        if (const AttentionKernelKind &kind = attentionKernel(s.kind); causal && !kind.causal) {
            entry.skipped = true;
            entry.reason = kind.kind + " cannot be causal: " + kind.notCausal;
            entries.push_back(std::move(entry));
            continue;
        }
        try {
            const AttentionResult r = attention_kernel_forward(s, q, k, v, options);
            entry.weights = r.weights;
            entry.mask = r.mask;
            measure(entry, r.context, full.context, full.weights);
        } catch (const Error &e) {
            entry.skipped = true;
            entry.reason = e.what();
        }
        entries.push_back(std::move(entry));
    }
    return entries;
}

} // namespace atlas::attention
