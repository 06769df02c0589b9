#include "arguments.h"
#include "attention/attentionkernel.h"
#include "attention/attentionsweep.h"
#include "attention/gaussianstream.h"
#include "commands.h"
#include "util/blasthreads.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

namespace atlas {

namespace {

constexpr int64_t kHeadWidth = 64; // d_head of GPT-2 and of the benchmarks in docs/benchmarks.md

struct Timing
{
    double median, min, max, first; // ms; first: the process's first run, untimed in the others
};

// Untimed runs before the timed ones. A process's first calls touch new memory, and on the benchmark machine (a
// virtual machine) a page touched for the first time costs about 11 µs (docs/benchmarks.md): at 16384 tokens the
// first run of a kernel takes up to twice its time, and the second a little more than the rest. From then on the
// tensor buffers kept for reuse (tensor/buffercache.h) serve every call. The first run is reported apart.
constexpr int kWarmups = 3;

// One head of N random queries, keys and values (N(0,1) entries, fixed seeds).
Timing timeKernel(
    const attention::AttentionKernelSpec &spec, const attention::AttentionOptions &options, int64_t N, int repeat)
{
    const MatrixRM q = attention::GaussianStream(1, 0).matrix(N, kHeadWidth);
    const MatrixRM k = attention::GaussianStream(1, 1).matrix(N, kHeadWidth);
    const MatrixRM v = attention::GaussianStream(1, 2).matrix(N, kHeadWidth);
    const ConstMatrixMap qm(q.data(), N, kHeadWidth), km(k.data(), N, kHeadWidth), vm(v.data(), N, kHeadWidth);
    std::vector<double> ms;
    double first = 0.0;
    for (int r = 0; r < kWarmups + repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const attention::AttentionResult result = attention::attention_kernel_forward(spec, qm, km, vm, options);
        const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!std::isfinite(result.context.matrix().sum()))
            throw Error("kernel " + spec.kind + " produced a non-finite context at length " + std::to_string(N));
        if (r == 0)
            first = elapsed;
        if (r >= kWarmups)
            ms.push_back(elapsed);
    }
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms.front(), ms.back(), first};
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

// "AMD EPYC 7B13, 2 cores": the CPU model from /proc/cpuinfo and the worker count.
std::string machineDescription()
{
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line, model = "unknown CPU";
    while (std::getline(cpuinfo, line))
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
            model = line.substr(line.find(':') + 2);
            break;
        }
    return model + ", " + std::to_string(workerThreads()) + " cores";
}

std::string todayUtc()
{
    const std::time_t now = std::time(nullptr);
    char text[16];
    std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
    return text;
}

// Adds this kernel's sweep to the sweep file `path` (attentionsweep.h), replacing an earlier one of the same kind
// and causality and keeping the others, so one file collects one sweep per kernel (read by the "kernels" view).
void writeSweepJson(const std::string &path, const attention::AttentionKernelSpec &spec,
    const attention::AttentionOptions &options, int repeat, const std::vector<int64_t> &lengths,
    const std::vector<Timing> &timings, double slope)
{
    attention::AttentionSweepFile file;
    if (std::filesystem::exists(path))
        file = attention::readAttentionSweep(path);
    file.machine = machineDescription();
    file.date = todayUtc();
    file.dHead = int(kHeadWidth);
    file.matrixBackend = matrixProductsDescription();
    attention::KernelSweep sweep {
        spec.kind, attention::describeAttentionKernel(spec), options.causal, repeat, slope, {}};
    for (size_t i = 0; i < lengths.size(); ++i)
        sweep.points.push_back({lengths[i], timings[i].median, timings[i].min, timings[i].max});
    file.put(sweep);
    attention::writeAttentionSweep(path, file);
}

// Times N = 256 … 16384. A kernel other than full attention is timed against full attention at each N in the same
// process, one right after the other, so that its speed-up is measured under the same conditions (issue 34): the
// machine's speed drifts between minutes by more than the ratios themselves.
void sweep(const attention::AttentionKernelSpec &spec, const attention::AttentionOptions &options, int repeat,
    const std::string &jsonPath)
{
    std::vector<Timing> timings;
    std::vector<int64_t> lengths, upper;
    std::vector<double> upperMs;
    for (int64_t N = 256; N <= 16384; N *= 2)
        lengths.push_back(N);
    const bool againstFull = !attention::isExactAttention(spec);
    const attention::AttentionKernelSpec full = attention::parseAttentionKernelSpec("full", {});
    std::printf(againstFull ? "| N | median ms | min ms | max ms | max/min | full attention ms | speed-up |\n"
                              "| --- | --- | --- | --- | --- | --- | --- |\n"
                            : "| N | median ms | min ms | max ms | max/min |\n| --- | --- | --- | --- | --- |\n");
    for (size_t i = 0; i < lengths.size(); ++i) {
        const Timing t = timeKernel(spec, options, lengths[i], repeat);
        timings.push_back(t);
        std::printf(
            "| %lld | %.2f | %.2f | %.2f | %.2f |", (long long)lengths[i], t.median, t.min, t.max, t.max / t.min);
        if (againstFull) {
            const Timing f = timeKernel(full, options, lengths[i], repeat);
            std::printf(" %.2f | %.1f× |", f.median, f.median / t.median);
        }
        std::printf("\n");
        std::fflush(stdout);
        if (i >= lengths.size() / 2) { // the upper half: N >= 2048
            upper.push_back(lengths[i]);
            upperMs.push_back(t.median);
        }
    }
    const double slope = logLogSlope(upper, upperMs);
    std::printf("log-log slope (least squares, N = %lld … %lld): %.2f\n", (long long)upper.front(),
        (long long)upper.back(), slope);
    if (!jsonPath.empty()) {
        writeSweepJson(jsonPath, spec, options, repeat, lengths, timings, slope);
        std::printf("wrote %s\n", jsonPath.c_str());
    }
}

} // namespace

int benchAttentionCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "bench-attention");
    const attention::AttentionKernelSpec spec
        = attention::parseAttentionKernelSpec(args.value("kernel", "full"), args.values("attention-param"));
    attention::AttentionOptions options;
    options.causal = args.flag("causal");
    const int length = args.intValue("length", 4096, 1, 1 << 24), repeat = args.intValue("repeat", 5, 1, 1 << 20);
    if (length < 1 || repeat < 1)
        throw Error("--length and --repeat must be at least 1");
    if (args.has("json") && !args.flag("sweep"))
        throw Error("--json writes a sweep: add --sweep");
    std::printf("kernel %s, d_head %lld, %s, %d cores, matrix products by %s, %d timed runs after %d "
                "warm-ups\n",
        attention::describeAttentionKernel(spec).c_str(), (long long)kHeadWidth,
        options.causal ? "causal" : "not causal", workerThreads(), matrixProductsDescription().c_str(), repeat,
        kWarmups);
    if (args.flag("sweep")) {
        sweep(spec, options, repeat, args.value("json"));
        return 0;
    }
    const Timing t = timeKernel(spec, options, length, repeat);
    std::printf("%d tokens: median %.2f ms (min %.2f, max %.2f, max/min %.2f); the process's first run %.2f ms\n",
        length, t.median, t.min, t.max, t.max / t.min, t.first);
    return 0;
}

} // namespace atlas
