#include "arguments.h"
#include "attention/attentionkernel.h"
#include "attention/gaussianstream.h"
#include "commands.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace atlas {

namespace {

constexpr int64_t kHeadWidth = 64; // d_head of GPT-2 and of the benchmarks in docs/benchmarks.md

struct Timing
{
    double median, min, max; // ms
};

// One head of N random queries, keys and values (N(0,1) entries, fixed seeds), one untimed warm-up run.
Timing timeKernel(
    const attention::AttentionKernelSpec &spec, const attention::AttentionOptions &options, int64_t N, int repeat)
{
    const MatrixRM q = attention::GaussianStream(1, 0).matrix(N, kHeadWidth);
    const MatrixRM k = attention::GaussianStream(1, 1).matrix(N, kHeadWidth);
    const MatrixRM v = attention::GaussianStream(1, 2).matrix(N, kHeadWidth);
    const ConstMatrixMap qm(q.data(), N, kHeadWidth), km(k.data(), N, kHeadWidth), vm(v.data(), N, kHeadWidth);
    std::vector<double> ms;
    for (int r = 0; r <= repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const attention::AttentionResult result = attention::attention_kernel_forward(spec, qm, km, vm, options);
        const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!std::isfinite(result.context.matrix().sum()))
            throw Error("kernel " + spec.kind + " produced a non-finite context at length " + std::to_string(N));
        if (r > 0)
            ms.push_back(elapsed);
    }
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms.front(), ms.back()};
}

// Least-squares slope of log(time) against log(N).
double logLogSlope(const std::vector<int64_t> &lengths, const std::vector<double> &ms)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double n = double(lengths.size());
    for (size_t i = 0; i < lengths.size(); ++i) {
        const double x = std::log(double(lengths[i])), y = std::log(ms[i]);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

void sweep(const attention::AttentionKernelSpec &spec, const attention::AttentionOptions &options, int repeat)
{
    std::vector<int64_t> lengths, upper;
    std::vector<double> upperMs;
    for (int64_t N = 256; N <= 16384; N *= 2)
        lengths.push_back(N);
    std::printf("| N | median ms | min ms | max ms |\n| --- | --- | --- | --- |\n");
    for (size_t i = 0; i < lengths.size(); ++i) {
        const Timing t = timeKernel(spec, options, lengths[i], repeat);
        std::printf("| %lld | %.2f | %.2f | %.2f |\n", (long long)lengths[i], t.median, t.min, t.max);
        std::fflush(stdout);
        if (i >= lengths.size() / 2) { // the upper half: N >= 2048
            upper.push_back(lengths[i]);
            upperMs.push_back(t.median);
        }
    }
    std::printf("log-log slope (least squares, N = %lld … %lld): %.2f\n", (long long)upper.front(),
        (long long)upper.back(), logLogSlope(upper, upperMs));
}

} // namespace

// bench-attention --kernel KIND [--length N] [--repeat R] [--attention-param key=value ...] [--causal] [--sweep]
int benchAttentionCommand(const CommandArgs &argv)
{
    const Arguments args(argv, {"kernel", "length", "repeat", "attention-param"}, {"causal", "sweep"});
    const attention::AttentionKernelSpec spec
        = attention::parseAttentionKernelSpec(args.value("kernel", "full"), args.values("attention-param"));
    attention::AttentionOptions options;
    options.causal = args.flag("causal");
    const int length = args.intValue("length", 4096), repeat = args.intValue("repeat", 5);
    if (length < 1 || repeat < 1)
        throw Error("--length and --repeat must be at least 1");
    std::printf("kernel %s, d_head %lld, %s, %d cores, matrix products by %s, %d timed runs after one warm-up\n",
        attention::describeAttentionKernel(spec).c_str(), (long long)kHeadWidth,
        options.causal ? "causal" : "not causal", workerThreads(), ATLAS_MATRIX_BACKEND, repeat);
    if (args.flag("sweep")) {
        sweep(spec, options, repeat);
        return 0;
    }
    const Timing t = timeKernel(spec, options, length, repeat);
    std::printf("%d tokens: median %.2f ms (min %.2f, max %.2f)\n", length, t.median, t.min, t.max);
    return 0;
}

} // namespace atlas
