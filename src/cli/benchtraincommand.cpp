#include "arguments.h"
#include "commands.h"
#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "tensor/matrixproduct.h"
#include "train/adamw.h"
#include "train/backprop.h"
#include "util/blasthreads.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

namespace atlas {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Timings
{
    std::vector<double> total, forward, backward, update;
};

void printMedian(const char *what, std::vector<double> ms)
{
    std::sort(ms.begin(), ms.end());
    std::printf("  %-9s median %8.2f ms  (min %.2f, max %.2f)\n", what, ms[ms.size() / 2], ms.front(), ms.back());
}

// length + 1 random token ids: the first `length` are the input, each one's successor its target.
std::pair<Input, std::vector<int>> randomBatch(const Model &model, int length)
{
    std::mt19937 rng(7);
    std::vector<int> ids;
    for (int i = 0; i <= length; ++i)
        ids.push_back(static_cast<int>(rng() % static_cast<unsigned>(model.config.vocab)));
    return {Input {std::vector<int>(ids.begin(), ids.end() - 1), {}}, std::vector<int>(ids.begin() + 1, ids.end())};
}

} // namespace

// One training step = traced forward, backward (loss on the next token at every position), AdamW with clipping.
int benchTrainCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "bench-train");
    if (args.has("shape") && args.value("shape") != "gpt2-small")
        throw Error("--shape: only 'gpt2-small' is known");
    std::shared_ptr<Model> model = args.has("shape")
        ? std::make_shared<Model>(Model::random(ModelConfig::gpt2Small(), 1234))
        : std::make_shared<Model>(*loadModel(args.value("model", "tiny-bytes")));
    const int length = args.intValue("length", 128, 1, 1 << 24), repeat = args.intValue("repeat", 10, 1, 1 << 20);
    if (length < 1 || repeat < 1)
        throw Error("--length and --repeat must be at least 1");
    if (length + 1 > model->config.context)
        throw Error("--length: " + std::to_string(length) + " tokens and the next one exceed the context of "
            + std::to_string(model->config.context));
    const auto [input, targets] = randomBatch(*model, length);

    AdamW optimizer;
    const LearningRateSchedule schedule {3e-4f, 3e-5f, 2, repeat + 1};
    Timings timings;
    Gradients grads; // reused every step
    float firstLoss = 0.0f, lastLoss = 0.0f;
    for (int r = 0; r <= repeat; ++r) { // step 0 warms up caches and allocates the moments; not counted
        const auto t0 = Clock::now();
        Engine engine(model, input, {true, size_t(16) << 30});
        engine.runToEnd();
        const double forwardMs = msSince(t0);
        const auto t1 = Clock::now();
        grads.zero();
        accumulateGradients(grads, *model, input, engine.trace(), targets);
        const Gradients &g = grads;
        const double backwardMs = msSince(t1);
        const auto t2 = Clock::now();
        const float norm = optimizer.step(model->parameters(), g.grads, schedule.at(r));
        const double updateMs = msSince(t2);
        (r == 0 ? firstLoss : lastLoss) = g.loss;
        if (r == 0) {
            std::printf("step 0: loss %.4f, gradient norm %.4f\n", g.loss, norm);
            continue;
        }
        timings.total.push_back(msSince(t0));
        timings.forward.push_back(forwardMs);
        timings.backward.push_back(backwardMs);
        timings.update.push_back(updateMs);
    }
    std::printf("model %s (%lld parameters), %d tokens, %d cores, layers' products by %s, other products by %s, "
                "%d steps\n",
        model->name.c_str(), static_cast<long long>(model->parameterCount()), length, workerThreads(),
        layerProductsDescription(), matrixProductsDescription().c_str(), repeat);
    std::printf("loss %.4f at step 0, %.4f at step %d (the same batch every step)\n", firstLoss, lastLoss, repeat);
    printMedian("step", timings.total);
    printMedian("forward", timings.forward);
    printMedian("backward", timings.backward);
    printMedian("AdamW", timings.update);
    return 0;
}

} // namespace atlas
