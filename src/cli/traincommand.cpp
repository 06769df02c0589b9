#include "arguments.h"
#include "commands.h"
#include "model/builtinmodels.h"
#include "train/checkpointdirectory.h"
#include "train/trainingsetup.h"
#include "util/error.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>

#include <unistd.h>

namespace atlas {

namespace {

// On a terminal, one line redrawn in place; in a log (CI, a pipe), a line per evaluation only.
void printProgress(const StepReport &r, int total, const Evaluation *eval)
{
    static const bool terminal = isatty(STDERR_FILENO);
    if (!terminal && !eval)
        return;
    const int width = 30, filled = int(double(r.step) / total * width);
    std::fprintf(stderr, "\r[%s%s] %5d/%d  loss %.4f  lr %.2e  %6.0f tok/s", std::string(size_t(filled), '#').c_str(),
        std::string(size_t(width - filled), '.').c_str(), r.step, total, r.loss, r.learningRate, r.tokensPerSecond);
    if (r.routerLoss > 0)
        std::fprintf(stderr, "  router loss %.4f", r.routerLoss);
    if (r.spanLoss > 0)
        std::fprintf(stderr, "  span penalty %.4f", r.spanLoss);
    if (r.ponderTime > 0)
        std::fprintf(stderr, "  ponder %.2f blocks", r.ponderTime);
    if (eval)
        std::fprintf(stderr, "  held-out loss %.4f, token accuracy %.1f%%, exact %.1f%%\n", eval->loss,
            100 * eval->tokenAccuracy, 100 * eval->exactMatch);
    std::fflush(stderr);
}

// The new run the options describe: the task, then every option of the run and its model (train/trainingrunoptions.h).
TrainingRun newRun(const Arguments &args, const std::optional<MemoryOptions> &memory)
{
    TrainingRun run;
    run.task = args.required("task");
    for (const TrainingRunOption &o : trainingRunOptions())
        if (args.has(o.name) || args.flag(o.name))
            setTrainingRunOption(run, o.name, args.flag(o.name) ? "true" : args.value(o.name), "option --" + o.name);
    applyFineTuningLearningRate(run, args.has("lr"));
    if (memory)
        run.options.memory = *memory;
    return run;
}

} // namespace

int trainCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "train");
    const std::string out = args.required("out");
    if (args.has("checkpoint-every") && args.value("memory-strategy") != "checkpoint")
        throw Error("--checkpoint-every K is gradient checkpointing's interval, with --memory-strategy checkpoint; "
                    "to save the training state every K steps, use --save-every K");
    std::optional<MemoryOptions> memory;
    if (args.has("memory-strategy") || args.has("ffn-chunks")) {
        memory = MemoryOptions {};
        memory->strategy = parseMemoryStrategy(args.value("memory-strategy", "plain"));
        memory->checkpointEvery = args.intValue("checkpoint-every", 0, 0, 1 << 20);
        memory->ffnChunks = args.intValue("ffn-chunks", 1, 1, 1 << 20);
    }
    const int evalEvery = args.intValue("eval-every", 250, 1, std::numeric_limits<int>::max()),
              saveEvery = args.intValue("save-every", 500, 1, std::numeric_limits<int>::max());
    const int evalExamples = args.intValue("eval-examples", 256, 1, 100000);
    if (evalEvery < 1 || saveEvery < 1 || evalExamples < 1)
        throw Error("--eval-every, --save-every and --eval-examples must be at least 1");
    std::optional<TrainingRun> run; // a new run; none with --resume
    if (args.flag("resume")) {
        // A resumed run keeps what it was started with (trainer.json), never silently ignores an option.
        for (const TrainingRunOption &o : trainingRunOptions())
            if (args.has(o.name) || args.flag(o.name))
                throw Error("--" + o.name
                    + (o.group == TrainingRunOption::Group::Model
                            ? " makes a new model; a resumed run keeps the model it was trained with"
                            : " is the run's own: a resumed run keeps the value it was started with (its "
                              "trainer.json); to train on with other settings, start a new run in another directory"));
        if (args.has("task"))
            throw Error("--task is the run's own: a resumed run keeps the task it was started with (its trainer.json)");
    } else {
        run = newRun(args, memory);
        trainingModelConfig(*run); // a model the layouts do not have is refused before --out is made
        std::error_code same;
        if (!run->from.empty() && std::filesystem::equivalent(resolveModel(run->from), out, same))
            throw Error("--out " + out
                + " is the model --from starts from: the run would replace it; give another "
                  "directory");
    }
    // Before the first step, not at the first save: a read-only --out fails now.
    const CheckpointDirectory checkpoints(out);
    checkpoints.checkWritable();
    checkpoints.removeStale(); // what an interrupted run left
    const std::unique_ptr<Trainer> trainer = run ? newTrainer(*run) : Trainer::resume(out, memory);
    if (!run)
        std::fprintf(stderr, "resuming %s at step %d\n", out.c_str(), trainer->stepCount());
    const int total = trainer->options().steps;
    const MemoryOptions &m = trainer->options().memory;
    std::fprintf(stderr, "memory strategy %s%s%s\n", memoryStrategyName(m.strategy).c_str(),
        m.strategy == MemoryStrategy::Checkpoint ? (
            " (a boundary every " + std::to_string(checkpointInterval(m, trainer->model()->config.layers)) + " layers)")
                                                       .c_str()
                                                 : "",
        m.ffnChunks > 1 ? (", feed-forward in " + std::to_string(m.ffnChunks) + " chunks").c_str() : "");
    double trainingSeconds = 0, trainedTokens = 0; // step time only: evaluation and checkpoints excluded
    while (trainer->stepCount() < total) {
        const auto t0 = std::chrono::steady_clock::now();
        const StepReport r = trainer->step();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        trainingSeconds += seconds;
        trainedTokens += r.tokensPerSecond * seconds;
        const bool evalNow = r.step % evalEvery == 0 || r.step == total;
        Evaluation e;
        if (evalNow)
            e = trainer->evaluate(evalExamples);
        printProgress(r, total, evalNow ? &e : nullptr);
        if (r.step % saveEvery == 0 || r.step == total)
            trainer->save(out);
    }
    const Evaluation final = trainer->evaluate(evalExamples);
    std::printf(
        "task %s, %d steps, seed %llu: held-out loss %.4f, token accuracy %.2f%%, exact match %.2f%% (%d examples)\n",
        trainer->task().name().c_str(), total, (unsigned long long)trainer->options().seed, final.loss,
        100 * final.tokenAccuracy, 100 * final.exactMatch, evalExamples);
    if (trainingSeconds > 0)
        std::printf("training throughput: %.0f tokens/s (%.0f tokens in %.1f s of optimiser steps)\n",
            trainedTokens / trainingSeconds, trainedTokens, trainingSeconds);
    std::printf("model and checkpoint in %s (open it with --model %s or File > Open Model Directory)\n", out.c_str(),
        out.c_str());
    return 0;
}

} // namespace atlas
