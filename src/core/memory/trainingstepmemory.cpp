#include "memory/trainingstepmemory.h"

#include "train/backprop.h"
#include "train/strategyrunner.h"
#include "util/error.h"

#include <Eigen/Core>

#include <chrono>
#include <fstream>
#include <string>

namespace atlas {

namespace {

using Clock = std::chrono::steady_clock;

// Forward and backward of every sequence into one set of gradients, their mean, then AdamW; the gradients are
// freed at the end, as a training loop that does not keep them. Returns the mean loss.
float trainingStep(Model &model, const std::vector<TrainingSequence> &sequences, const MemoryOptions &options,
    AdamW &optimizer, float learningRate)
{
    if (sequences.empty())
        throw Error("a training step needs at least one sequence");
    Gradients g;
    for (const TrainingSequence &s : sequences) {
        StrategyRunner runner(model, s.input, options);
        runner.forward();
        runner.backward(s.targets, g);
    }
    const float scale = 1.0f / float(sequences.size());
    {
        MemoryScope scope(MemoryPhase::Optimizer, -1, "adamw", MemoryCategory::OptimizerState);
        for (auto &[name, t] : g.grads)
            Eigen::Map<Eigen::ArrayXf>(t.data(), t.numel()) *= scale;
        optimizer.step(model.parameters(), g.grads, learningRate);
    }
    MemoryScope scope(MemoryPhase::Optimizer, -1, "gradients freed", MemoryCategory::Gradients);
    const float loss = g.loss * scale;
    g.grads.clear();
    return loss;
}

} // namespace

TrainingStepMemory measureTrainingStep(Model &model, const std::vector<TrainingSequence> &sequences,
    const MemoryOptions &options, AdamW &optimizer, float learningRate)
{
    validateMemoryOptions(options, model.config, sequences.empty() ? 0 : int(sequences.front().input.tokens.size()));
    TrainingStepMemory m;
    m.options = options;
    m.layers = model.config.layers;
    m.tokens = sequences.empty() ? 0 : int(sequences.front().input.tokens.size());
    m.batch = int(sequences.size());
    m.predictedActivationBytes = predictedActivationBytes(
        model.config, m.tokens, options, sequences.empty() ? 0 : int(sequences.front().input.source.size()));
    AllocationRecorder recorder;
    for (const auto &[name, p] : model.parameters())
        recorder.adopt(*p, MemoryCategory::Parameters);
    {
        const std::map<std::string, Tensor> moments = optimizer.state(); // shares the buffers: dropped before the step
        for (const auto &[name, t] : moments)
            recorder.adopt(t, MemoryCategory::OptimizerState);
    }
    const auto t0 = Clock::now();
    m.loss = trainingStep(model, sequences, options, optimizer, learningRate);
    m.recordedMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    m.recording = recorder.finish();
    m.peakBytes = m.recording.peakBytes(false);
    m.peakActivationBytes = m.recording.peakBytes(true);
    return m;
}

double timeTrainingStep(Model &model, const std::vector<TrainingSequence> &sequences, const MemoryOptions &options,
    AdamW &optimizer, float learningRate)
{
    const auto t0 = Clock::now();
    trainingStep(model, sequences, options, optimizer, learningRate);
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int64_t peakResidentBytes()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return std::stoll(line.substr(6)) * 1024; // "VmHWM:   123456 kB"
    return 0;
}

} // namespace atlas
