#pragma once

#include "model/model.h"
#include "train/evaluation.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

// Pruning whole blocks at inference, as LayerDrop (Fan et al. 2019) makes possible: a model trained with blocks
// dropped at random still works with some of them left out. Two ways to keep k of L blocks:
//   - "first": blocks 0 … k − 1, the top L − k dropped (early exit at a fixed depth);
//   - "every other": k blocks spread evenly, block ⌊(j + 1)·L / k⌋ − 1 for j = 0 … k − 1, so that keeping half
//     drops blocks 0, 2, 4 … (Fan et al.'s "every other" strategy, which they found the best of the simple ones).
namespace atlas {

enum class PruneRule { First, EveryOther };

struct PrunedDepth
{
    int kept = 0; // blocks run
    std::vector<int> dropped; // ascending
    Evaluation score; // the model's task on held-out examples with those blocks dropped
};

struct DepthSweep
{
    std::string model, task;
    int layers = 0, examples = 0;
    std::vector<PrunedDepth> first, everyOther; // k = 1 … L each (k = L: the whole model)
};

// A shared model (the Universal Transformer's one block) scored with its block applied 1 … maxSteps times.
struct StepSweep
{
    std::string model, task;
    int trained = 0, examples = 0; // the steps it was trained with
    std::vector<Evaluation> scores; // [s − 1]: s steps
};

// "1,3" -> blocks 1 and 3, each in 0..layers−1 (sorted, each once); errors name `source` and the item.
std::vector<int> parseLayerList(const std::string &text, int layers, const std::string &source);
// The blocks `rule` drops to keep `kept` of `layers` (1 ≤ kept ≤ layers).
std::vector<int> droppedBlocks(PruneRule rule, int kept, int layers);
// Why `model` cannot be swept ("" when it can): it has no task (atlas_task), or two stacks or reversible blocks.
std::string depthSweepProblem(const Model &model);
// The model's own task (atlas_task) scored at every depth by both rules, on `examples` held-out examples. Throws
// atlas::Error with depthSweepProblem's reason.
DepthSweep depthSweep(std::shared_ptr<const Model> model, int examples = 256);
// A shared model's own task (atlas_task) with its block applied 1 … maxSteps times (Model::withDepth), on `examples`
// held-out examples. Throws atlas::Error for a model whose blocks are its own or that has no task. `scored` hears the
// step counts done after each; returning false stops the sweep there (a cancelled view).
StepSweep stepSweep(
    std::shared_ptr<const Model> model, int maxSteps, int examples = 256, const std::function<bool(int)> &scored = {});

} // namespace atlas
