#include "attention/approximationsweep.h"

#include "attention/attentionkernel.h"
#include "attention/fullattention.h"
#include "attention/kernelcomparison.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>

namespace atlas::attention {

namespace {

[[noreturn]] void fail(const std::string &kernel, const std::string &what)
{
    throw Error("approximation sweep, attention kernel '" + kernel + "': " + what);
}

SweepStat statOf(const std::vector<double> &runs)
{
    SweepStat s;
    if (runs.empty())
        return s;
    s.min = *std::min_element(runs.begin(), runs.end());
    s.max = *std::max_element(runs.begin(), runs.end());
    double sum = 0;
    for (double r : runs)
        sum += r;
    s.mean = sum / double(runs.size());
    return s;
}

// The kernel `kind` names, when it approximates softmax attention with a size to sweep; fails naming the ones that do.
const AttentionKernelKind &approximationKernel(const std::string &kind)
{
    std::string known;
    for (const AttentionKernelKind &k : attentionKernels())
        if (!k.approximation.key.empty()) {
            if (k.kind == kind)
                return k;
            known += (known.empty() ? "'" : " or '") + k.kind + "'";
        }
    fail(kind, "the sweep approximates with " + known + " only");
}

// The kernel spec of one run; parseAttentionKernelSpec rejects k or features below 1, naming kernel and key.
AttentionKernelSpec runSpec(const ApproximationSweepOptions &o, int value, int seed)
{
    std::vector<std::string> params
        = {attentionKernel(o.kernel).approximation.key + "=" + std::to_string(value), "seed=" + std::to_string(seed)};
    if (o.identity)
        params.push_back("projection=identity");
    return parseAttentionKernelSpec(o.kernel, params);
}

void validate(const ApproximationSweepOptions &o)
{
    const AttentionKernelKind &kernel = approximationKernel(o.kernel);
    if (o.causal && !kernel.causal)
        fail(o.kernel, "cannot be causal: " + kernel.notCausal);
    const auto projection = std::find_if(
        kernel.params.begin(), kernel.params.end(), [](const KernelParam &p) { return p.key == "projection"; });
    if (o.identity
        && (projection == kernel.params.end()
            || std::find(projection->choices.begin(), projection->choices.end(), "identity")
                == projection->choices.end()))
        fail(o.kernel, "it has no identity projection");
    if (o.seeds < 1)
        fail(o.kernel, "seeds must be at least 1, got " + std::to_string(o.seeds));
    if (o.values.empty() && o.identity)
        fail(o.kernel, "the identity projection needs the values given (k = T)");
}

bool cancelled(const ApproximationSweepOptions &o)
{
    return o.cancel != nullptr && o.cancel->load(std::memory_order_relaxed);
}

// One value, every seed, dense: compareKernels gives the context errors and the KL; the row L1 is added here.
ApproximationPoint densePoint(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const ApproximationSweepOptions &o,
    int value, ApproximationSweep &sweep)
{
    std::vector<AttentionKernelSpec> specs = {parseAttentionKernelSpec("full", {})};
    for (int s = 0; s < o.seeds; ++s)
        specs.push_back(runSpec(o, value, s));
    std::vector<KernelComparisonEntry> entries = compareKernels(q, k, v, o.causal, o.padding, specs);
    std::vector<double> maxErr, meanErr, l1, kl;
    for (size_t i = 1; i < entries.size(); ++i) {
        const KernelComparisonEntry &e = entries[i];
        if (e.skipped)
            throw Error("approximation sweep: " + e.reason);
        maxErr.push_back(e.maxAbsError);
        meanErr.push_back(e.meanAbsError);
        kl.push_back(e.meanKl);
        l1.push_back(meanRowL1(e.weights, entries[0].weights));
    }
    if (sweep.exactWeights.empty()) {
        sweep.exactWeights = entries[0].weights;
        sweep.mask = entries[0].mask;
    }
    ApproximationPoint p;
    p.value = value;
    p.maxAbsError = statOf(maxErr);
    p.meanAbsError = statOf(meanErr);
    p.rowL1 = statOf(l1);
    p.kl = statOf(kl);
    if (o.keepWeights)
        p.weights = entries[1].weights;
    return p;
}

// One value, every seed, context only: no (T,T) matrix. exact is full attention's context (T,d).
ApproximationPoint contextPoint(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
    const ApproximationSweepOptions &o, int value, const Tensor &exact)
{
    AttentionOptions options;
    options.causal = o.causal;
    options.padding = o.padding;
    std::vector<double> maxErr, meanErr;
    for (int s = 0; s < o.seeds && !cancelled(o); ++s) {
        const AttentionResult r = attention_kernel_forward(runSpec(o, value, s), q, k, v, options);
        const auto diff = (r.context.matrix() - exact.matrix()).array().abs().cast<double>();
        maxErr.push_back(diff.maxCoeff());
        meanErr.push_back(diff.mean());
    }
    ApproximationPoint p;
    p.value = value;
    p.maxAbsError = statOf(maxErr);
    p.meanAbsError = statOf(meanErr);
    return p;
}

} // namespace

std::vector<int> defaultSweepValues(const std::string &kernel, int64_t T)
{
    return approximationKernel(kernel).approximation.sweep(T);
}

double meanRowL1(const Tensor &a, const Tensor &exact)
{
    const int64_t T = exact.dim(0), n = exact.dim(1);
    double sum = 0;
    int64_t rows = 0;
    for (int64_t i = 0; i < T; ++i) {
        const float *p = exact.data() + i * n, *w = a.data() + i * n;
        if (!(*std::max_element(p, p + n) > 0.0f))
            continue; // a query with nothing to attend (every key padded)
        double row = 0;
        for (int64_t j = 0; j < n; ++j)
            row += std::abs(double(w[j]) - double(p[j]));
        sum += row;
        ++rows;
    }
    return rows > 0 ? sum / double(rows) : 0.0;
}

ApproximationSweep approximation_sweep(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const ApproximationSweepOptions &options)
{
    validate(options);
    AttentionOptions head;
    head.causal = options.causal;
    head.padding = options.padding;
    checkHeadInputs(options.kernel.c_str(), q, k, v, head);
    ApproximationSweep sweep;
    sweep.kernel = options.kernel;
    sweep.T = q.rows();
    sweep.d = q.cols();
    sweep.seeds = options.seeds;
    sweep.causal = options.causal;
    sweep.hasWeightErrors = sweep.T <= kMaxDenseSweepTokens;
    const std::vector<int> values
        = options.values.empty() ? defaultSweepValues(options.kernel, sweep.T) : options.values;
    for (int value : values) { // every value checked before any work
        runSpec(options, value, 0);
        if (options.identity && value != sweep.T)
            fail(options.kernel,
                "the identity projection needs k = T = " + std::to_string(sweep.T)
                    + ", got k = " + std::to_string(value));
    }
    Tensor exact;
    if (!sweep.hasWeightErrors)
        exact = full_attention_forward(q, k, v, head).context;
    for (int value : values) {
        if (cancelled(options)) {
            sweep.cancelled = true;
            break;
        }
        sweep.points.push_back(sweep.hasWeightErrors ? densePoint(q, k, v, options, value, sweep)
                                                     : contextPoint(q, k, v, options, value, exact));
    }
    sweep.cancelled = sweep.cancelled || cancelled(options);
    return sweep;
}

} // namespace atlas::attention
