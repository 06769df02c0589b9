#include "arguments.h"
#include "attention/attentionpattern.h"
#include "commands.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace atlas {

// Times attentionPattern (what the pattern editor computes on every slider move) and prints its counts.
int benchPatternCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "bench-pattern");
    const attention::AttentionKernelSpec spec
        = attention::parseAttentionKernelSpec(args.value("kernel", "longformer"), args.values("attention-param"));
    const int length = args.intValue("length", 16384, 1, 1 << 24), repeat = args.intValue("repeat", 10, 1, 1 << 20);
    const int cells = args.intValue("cells", 512, 1, 4096);
    const bool causal = args.flag("causal");
    if (length < 1 || repeat < 1 || cells < 1)
        throw Error("--length, --repeat and --cells must be at least 1");
    std::printf("pattern of %s, %d tokens, %s, %dx%d grid, %d cores, %d timed runs after one warm-up\n",
        attention::describeAttentionKernel(spec).c_str(), length, causal ? "causal" : "not causal", cells, cells,
        workerThreads(), repeat);
    std::vector<double> ms;
    attention::PatternSummary p;
    for (int r = 0; r <= repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        p = attention::attentionPattern(spec, length, causal, {}, cells);
        const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (r > 0)
            ms.push_back(elapsed);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("median %.1f ms (min %.1f, max %.1f)\n", ms[ms.size() / 2], ms.front(), ms.back());
    std::printf("allowed pairs %lld (%.3f%% of full attention's %lld), computed pairs %lld (%.2fx the allowed)\n",
        (long long)p.allowedPairs, 100.0 * p.allowedFraction(), (long long)p.fullPairs, (long long)p.computedPairs,
        p.allowedPairs ? double(p.computedPairs) / double(p.allowedPairs) : 0.0);
    return 0;
}

} // namespace atlas
