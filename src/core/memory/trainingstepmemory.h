#pragma once

#include "engine/input.h"
#include "memory/allocationrecorder.h"
#include "model/model.h"
#include "train/adamw.h"
#include "train/memorystrategy.h"

#include <cstdint>
#include <vector>

// One real training step measured: forward, backward and AdamW under a memory strategy, every tensor buffer
// recorded (memory/allocationrecorder.h). What the `memory` command writes and the memory views draw.
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
    int64_t peakActivationBytes = 0; // stored, recomputed and workspace (memory/allocationrecorder.h)
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

// The textbook count of the activation memory of one sequence's step: the tensors autograd saves, in float32.
// Per block (T tokens, width D, d_ff F, H heads): the block input, ln_1, Q, K, V, the merged heads, mid (a
// reversible block: Y₁) and ln_2, 8·T·D, plus mlp.up and mlp.act, 2·T·F (0 with chunked FFNs), plus the attention
// probabilities, H·T²: 4·(8TD + 2TF + HT²) bytes; RoPE adds the rotated Q and K (2TD), a gated FFN its gate (TF).
// The head keeps ln_f's input, ln_f, the logits and their softmax,
// 4·(2TD + 2TV). Plain keeps every block: L·block + head. Checkpointing keeps ⌈L/k⌉ boundaries of 4TD (a reversible
// model: 8TD) and one segment of k blocks at a time: ⌈L/k⌉·4TD + k·block + head. Reversible keeps the two last
// streams, 8TD, and one block at a time: 8TD + block + head. Workspace (scores, the gradients of activations) is
// not in the formula: the measured peak minus this count is what the textbook leaves out.
int64_t predictedActivationBytes(const ModelConfig &config, int tokens, const MemoryOptions &options);

// What one training step of a model of `config` on `tokens` tokens needs at least, before anything is allocated:
// the parameters with their gradients and AdamW's two moments (16 bytes a parameter) plus
// predictedActivationBytes(). In double: huge shapes must not wrap.
double estimatedTrainingStepBytes(const ModelConfig &config, int tokens, const MemoryOptions &options);

// The peak resident set size of this process so far (VmHWM of /proc/self/status), 0 where unavailable.
int64_t peakResidentBytes();

} // namespace atlas
