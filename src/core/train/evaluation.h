#pragma once

#include "engine/headablation.h"
#include "model/model.h"
#include "train/task.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace atlas {

struct Evaluation
{
    float loss = 0; // mean cross-entropy on held-out examples
    float tokenAccuracy = 0; // fraction of target tokens predicted (argmax) correctly
    float exactMatch = 0; // fraction of examples with every target right
    // [t]: the mean cross-entropy of the targets at position t (the token after the first t + 1 read, for a next-token
    // task) over the examples with a target there; NaN where none has one. Its mean weighted by the targets is `loss`.
    std::vector<double> positionLoss;
};

// Scores a model on `examples` held-out examples of a task (drawn from `seed`), both cores working.
// `lengthScale` > 1 draws held-out examples that many times longer than training's (Task::sampleLonger). A model
// whose positions work at any distance (sinusoidal, RoPE, ALiBi, T5's saturating buckets, Shaw's clipped keys,
// none) then runs with its context stretched to fit them; one with a learned table is refused by name
// (atlas::Error): it has no row past its context.
// `ablation`: the heads switched off in every run (engine/headablation.h); `droppedLayers`: the blocks left out of
// every run (LayerDrop's pruning, engine/input.h).
Evaluation evaluateOnTask(std::shared_ptr<const Model> model, const Task &task, int examples, uint64_t seed = 12345,
    int lengthScale = 1, const HeadAblation &ablation = {}, const std::vector<int> &droppedLayers = {});

// Changes each held-out example's run before it starts (the Input made from that Example), e.g. to protect its targets.
using InputAdjustment = std::function<void(Input &, const Example &)>;
// evaluateOnTask with every run changed by `adjust` (examples drawn as by lengthScale 1).
Evaluation evaluateAdjusted(
    std::shared_ptr<const Model> model, const Task &task, int examples, uint64_t seed, const InputAdjustment &adjust);

// A model's held-out score on its own task (atlas_task), with the share of token-positions its layers process on the
// task's windows (below 1 for a funnel, which shortens the sequence: model/funnel.h).
struct HeldOutScore
{
    std::string model; // empty: the model has no task, or the scoring was cancelled
    Evaluation evaluation;
    double work = 1;
};
HeldOutScore heldOutScore(std::shared_ptr<const Model> model, int examples, const std::atomic<bool> *cancel = nullptr);

} // namespace atlas
