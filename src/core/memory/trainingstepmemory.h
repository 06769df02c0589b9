#pragma once

#include "engine/input.h"
#include "model/model.h"
#include "trace/allocationrecorder.h"
#include "train/adamw.h"
#include "train/memorystrategy.h"

#include <cstdint>
#include <vector>

// One real training step measured: forward, backward and AdamW under a memory strategy, every tensor buffer
// recorded (trace/allocationrecorder.h). What the `memory` command writes and the memory views draw.
namespace atlas {

// One sequence of a step: its input and one target per position (-1: not counted), as backprop.h's.
struct TrainingSequence
{
    Input input;
    std::vector<int> targets;
};

struct TrainingStepMemory
{
    MemoryOptions options;
    int layers = 0;
    int tokens = 0; // per sequence
    int batch = 1; // sequences, run one after another into the same gradients (the engine has no batch axis)
    float loss = 0; // mean over the sequences, before the update
    MemoryRecording recording; // the step, from the parameters on hand to the update done
    int64_t peakBytes = 0; // every category
    int64_t peakActivationBytes = 0; // stored, recomputed and workspace (trace/allocationrecorder.h)
    int64_t predictedActivationBytes = 0; // predictedActivationBytes(), for this shape and strategy
    double recordedMs = 0; // the recorded step's wall time
};

// Runs one training step of `sequences` on `model` with `optimizer` (its moments, if any, are adopted as
// optimizer state; a first step allocates them) under `options`, recording it. Updates the model's parameters.
// Throws atlas::Error as StrategyRunner and backprop do.
TrainingStepMemory measureTrainingStep(Model &model, const std::vector<TrainingSequence> &sequences,
    const MemoryOptions &options, AdamW &optimizer, float learningRate = 1e-4f);

// The same step without recording; returns its wall time in milliseconds (the cost of the step itself).
double timeTrainingStep(Model &model, const std::vector<TrainingSequence> &sequences, const MemoryOptions &options,
    AdamW &optimizer, float learningRate = 1e-4f);

// The peak resident set size of this process so far (VmHWM of /proc/self/status), 0 where unavailable.
int64_t peakResidentBytes();

} // namespace atlas
