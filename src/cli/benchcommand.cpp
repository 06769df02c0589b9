#include "arguments.h"
#include "commands.h"
#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "modelinput.h"
#include "tensor/matrixproduct.h"
#include "util/blasthreads.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>

namespace atlas {

int benchCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "bench");
    if (args.has("shape") && args.value("shape") != "gpt2-small")
        throw Error("--shape: only 'gpt2-small' is known");
    auto model = args.has("shape") ? std::make_shared<const Model>(Model::random(ModelConfig::gpt2Small(), 1234))
                                   : loadModel(args.value("model", "tiny-bytes"));
    const int length = args.intValue("length", 128, 1, 1 << 24), repeat = args.intValue("repeat", 10, 1, 1 << 20);
    if (length < 1 || repeat < 1)
        throw Error("--length and --repeat must be at least 1");
    std::mt19937 rng(7);
    Input input;
    for (int i = 0; i < length; ++i)
        input.tokens.push_back(static_cast<int>(rng() % static_cast<unsigned>(model->config.vocab)));
    EngineOptions options = traceOptionsArgument(args);
    options.trace = !args.flag("no-trace");
    std::vector<double> ms;
    std::map<std::string, double> perOp; // label -> total ms over the counted runs
    size_t traceBytes = 0;
    AttentionTrace attention = AttentionTrace::Whole;
    BlockKeeping keeping = BlockKeeping::Everything;
    for (int r = 0; r <= repeat; ++r) { // run 0 warms up caches and is not counted
        Engine engine(model, input, options);
        const auto t0 = std::chrono::steady_clock::now();
        auto last = t0;
        while (!engine.atEnd()) {
            const int before = engine.cursor();
            engine.stepTowards(engine.opCount()); // as the app's run does: a feed-forward in rows when it keeps inputs
            const std::string label = engine.cursor() > before + 1
                ? "FFN in rows"
                : engine.program().ops[static_cast<size_t>(before)].label;
            const auto now = std::chrono::steady_clock::now();
            if (r > 0)
                perOp[label] += std::chrono::duration<double, std::milli>(now - last).count();
            last = now;
        }
        traceBytes = engine.trace().bytes();
        attention = engine.attentionTrace();
        keeping = engine.blockKeeping();
        if (r > 0)
            ms.push_back(std::chrono::duration<double, std::milli>(last - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::printf("model %s, %d tokens, %s, %d cores, layers' products by %s, other products by %s, %d runs\n",
        model->name.c_str(), length,
        !options.trace                              ? "untraced"
            : keeping == BlockKeeping::Input        ? "traced, attention on demand, each block keeping its input"
            : keeping == BlockKeeping::Checkpoints  ? "traced, attention on demand, each block keeping its checkpoints"
            : attention == AttentionTrace::OnDemand ? "traced, attention on demand"
                                                    : "traced, attention whole",
        workerThreads(), layerProductsDescription(), matrixProductsDescription().c_str(), repeat);
    std::printf("median %.2f ms  (min %.2f, max %.2f)  %.0f tokens/s  trace %.1f MiB\n", median, ms.front(), ms.back(),
        length / (median / 1000.0), double(traceBytes) / (1 << 20));
    if (args.flag("per-op"))
        for (const auto &[label, total] : perOp)
            std::printf("  %-22s %8.2f ms per run\n", label.c_str(), total / repeat);
    return 0;
}

} // namespace atlas
