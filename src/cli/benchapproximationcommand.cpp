#include "arguments.h"
#include "attention/approximationsweep.h"
#include "attention/attentionkernel.h"
#include "attention/gaussianstream.h"
#include "commands.h"
#include "util/blasthreads.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace atlas {

namespace {

// One run of the sweep the "approximation" view starts: every default size, every seed, dense up to
// kMaxDenseSweepTokens. q, k, v are (N,d). Returns the sweep and its wall time in ms.
attention::ApproximationSweep timedSweep(const MatrixRM &q, const MatrixRM &k, const MatrixRM &v,
    const attention::ApproximationSweepOptions &options, double &ms)
{
    const int64_t N = q.rows(), d = q.cols();
    const auto t0 = std::chrono::steady_clock::now();
    attention::ApproximationSweep s = attention::approximation_sweep(
        ConstMatrixMap(q.data(), N, d), ConstMatrixMap(k.data(), N, d), ConstMatrixMap(v.data(), N, d), options);
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return s;
}

void printSweep(const attention::ApproximationSweep &s)
{
    std::printf("| %s | row Σ|Δw| mean [min, max] | mean |ΔC| mean [min, max] |\n| --- | --- | --- |\n",
        attention::attentionKernel(s.kernel).approximation.key.c_str());
    for (const attention::ApproximationPoint &p : s.points)
        std::printf("| %d | %.4g [%.4g, %.4g] | %.4g [%.4g, %.4g] |\n", p.value, p.rowL1.mean, p.rowL1.min, p.rowL1.max,
            p.meanAbsError.mean, p.meanAbsError.min, p.meanAbsError.max);
}

} // namespace

int benchApproximationCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "bench-approximation");
    attention::ApproximationSweepOptions options;
    options.kernel = args.value("kernel", "linformer");
    options.causal = args.flag("causal");
    options.seeds = args.intValue("seeds", 5, 1, 1 << 16);
    const int length = args.intValue("length", 128, 1, 1 << 16), repeat = args.intValue("repeat", 5, 1, 1 << 20);
    const int d = args.intValue("head-dim", 64, 1, 1 << 16);
    if (length < 1 || repeat < 1 || d < 1)
        throw Error("--length, --repeat and --head-dim must be at least 1");
    // N(0,1) entries, as bench-attention: q·k/√d is of order 1, the weights neither uniform nor one-hot.
    const MatrixRM q = attention::GaussianStream(1, 0).matrix(length, d);
    const MatrixRM k = attention::GaussianStream(1, 1).matrix(length, d);
    const MatrixRM v = attention::GaussianStream(1, 2).matrix(length, d);
    std::printf("approximation sweep: %s, N %d, d_head %d, %s, %d seeds per size, %d cores, products by %s, "
                "%d timed runs after one warm-up\n",
        options.kernel.c_str(), length, d, options.causal ? "causal" : "not causal", options.seeds, workerThreads(),
        matrixProductsDescription().c_str(), repeat);
    std::vector<double> times;
    attention::ApproximationSweep sweep;
    for (int r = 0; r <= repeat; ++r) {
        double ms = 0;
        sweep = timedSweep(q, k, v, options, ms);
        if (r > 0)
            times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    std::printf("%zu sizes × %d seeds%s: median %.1f ms (min %.1f, max %.1f)\n", sweep.points.size(), sweep.seeds,
        sweep.hasWeightErrors ? ", dense (T×T weights per run)" : ", context errors only", times[times.size() / 2],
        times.front(), times.back());
    printSweep(sweep);
    return 0;
}

} // namespace atlas
