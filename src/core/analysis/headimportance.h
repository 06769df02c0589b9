#pragma once

#include "engine/headablation.h"
#include "engine/input.h"
#include "model/model.h"
#include "train/evaluation.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace atlas {

// The sequences a mean ablation averages over: `examples` held-out examples of the model's task (ModelConfig::task,
// drawn from a seed of their own, apart from the scoring examples) when it has one, else `input` alone. Mean
// ablation over this input's own positions would hand a causal model's early positions a summary of later tokens.
std::vector<std::vector<int>> ablationReferences(const Model &model, const std::vector<int> &input, int examples = 64);

// The ablation of `heads` in `mode`; Mode::Mean runs the unablated model on `references` and takes each head's
// context C_h averaged over every position of every reference.
HeadAblation makeHeadAblation(std::shared_ptr<const Model> model, const std::vector<HeadRef> &heads,
    HeadAblation::Mode mode, const std::vector<std::vector<int>> &references);

// The next-token distribution at `position` with and without the ablation, and, for a model with a task, the
// held-out scores of both (loss, token accuracy, exact match on `examples` examples). `baseline`, when given, is the
// whole model's scores on those examples already measured (HeadImportance::baseline), used instead of a new run.
struct AblationComparison
{
    std::vector<float> before; // [V] next-token probabilities of the whole model
    std::vector<float> after; // [V] with the heads switched off
    bool scored = false; // the model has a task, so the scores below are measured
    Evaluation baseline;
    Evaluation ablated;
};
AblationComparison compareAblation(std::shared_ptr<const Model> model, const Input &input, int position,
    const HeadAblation &ablation, int examples = 256, const Evaluation *baseline = nullptr);

// Michel et al.'s importance by removal: for every layer and head, the task's held-out scores with that head alone
// switched off, against the whole model's. `progress(done, total)` may return false to cancel (an empty result).
struct HeadImportance
{
    HeadAblation::Mode mode = HeadAblation::Mode::Zero;
    int examples = 0;
    Evaluation baseline;
    std::vector<std::vector<Evaluation>> without; // [layer][head]
    double lossIncrease(int layer, int head) const { return without[size_t(layer)][size_t(head)].loss - baseline.loss; }
};
HeadImportance headImportance(std::shared_ptr<const Model> model, HeadAblation::Mode mode, int examples = 256,
    const std::function<bool(int, int)> &progress = {});

} // namespace atlas
