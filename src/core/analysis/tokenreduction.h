#pragma once

#include "engine/tokenretention.h"
#include "model/model.h"
#include "train/evaluation.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

// PoWER-BERT's token elimination (Goyal et al. 2020; engine/tokenretention.h) measured: which tokens of one input
// survive each layer, and what eliminating tokens costs a masked language model's accuracy against the work saved,
// ranked by significance and, as a control, at random.
namespace atlas {

// One input run with a schedule: per layer j (0 … L − 2), each token's significance and whether it went on.
struct TokenSurvival
{
    std::vector<int> tokens;
    std::vector<int> protect; // the positions never eliminated ([MASK] and [CLS] of the input)
    std::vector<float> keep; // the schedule
    TokenRetention::Rank rank = TokenRetention::Rank::Significance;
    std::vector<std::vector<float>> significance; // [layer][token]; 0 for a token no longer present
    std::vector<std::vector<bool>> kept; // [layer][token]
    int keptAfter(int layer) const; // how many went on past `layer`
};

// The token-positions each sub-layer processes, summed over the model, as a share of the whole model's: layer j's
// attention reads the tokens present before its extract, its feed-forward the ones after (Goyal et al.'s placement
// of the extract layer). `kept[j]` = tokens after layer j's extract, j = 0 … L − 2, of `tokens`.
float retainedWork(const std::vector<int> &kept, int tokens, int layers);

struct ReductionPoint
{
    float rate = 1; // a geometric schedule: after layer j, rate^(j + 1) of the tokens remain
    float work = 1; // retainedWork averaged over the held-out examples
    // The task's held-out scores with each ranking: PoWER-BERT's, the random control, and the attention the targets pay
    // (TokenRetention::Rank::Targets).
    Evaluation significance, random, targets;
};

struct ReductionSweep
{
    std::string model, task;
    int layers = 0, examples = 0;
    std::vector<ReductionPoint> points; // rates 1, 0.9 … 0.3
};

// Why `model` cannot eliminate tokens ("" when it can): PoWER-BERT ranks the tokens an encoder attends to, so the
// model attends both ways, has one stack, and a task whose targets are positions of its input (atlas_task mlm).
std::string tokenReductionProblem(const Model &model);
// The positions of an input that a schedule never eliminates: its [MASK]s (what the model is asked to fill) and its
// [CLS], by the model's special tokens.
std::vector<int> protectedPositions(const ModelConfig &config, const std::vector<int> &tokens);
// `model` run on `tokens` with `keep` (engine/tokenretention.h) ranked by `rank`, its [MASK] and [CLS] protected.
// Throws atlas::Error for a model tokenReductionProblem refuses, or a schedule that does not fit it.
TokenSurvival tokenSurvival(std::shared_ptr<const Model> model, const std::vector<int> &tokens,
    const std::vector<float> &keep, TokenRetention::Rank rank = TokenRetention::Rank::Significance);
TokenRetention::Rank parseRanking(const std::string &text, const std::string &source); // significance|random|targets
// The model's task scored on `examples` held-out examples at every rate, its targets protected; an empty sweep when
// `cancel` turns true.
ReductionSweep tokenReductionSweep(
    std::shared_ptr<const Model> model, int examples, const std::atomic<bool> *cancel = nullptr);

} // namespace atlas
