#include "analysis/layerdrop.h"

#include "train/task.h"
#include "util/commalist.h"
#include "util/error.h"

#include <algorithm>

namespace atlas {

std::vector<int> parseLayerList(const std::string &text, int layers, const std::string &source)
{
    std::vector<int> out;
    for (const int value : parseIntList(text, source, "a layer number")) {
        const std::string item = std::to_string(value);
        if (value < 0 || value >= layers)
            throw Error(source + ": layer " + item + " is not one of the model's " + std::to_string(layers)
                + " layers (0.." + std::to_string(layers - 1) + ")");
        if (std::find(out.begin(), out.end(), value) != out.end())
            throw Error(source + ": layer " + item + " is listed twice");
        out.push_back(value);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<int> droppedBlocks(PruneRule rule, int kept, int layers)
{
    if (kept < 1 || kept > layers)
        throw Error("keeping " + std::to_string(kept) + " of " + std::to_string(layers) + " blocks: give 1.."
            + std::to_string(layers));
    std::vector<bool> keep(size_t(layers), false);
    for (int j = 0; j < kept; ++j)
        keep[size_t(rule == PruneRule::First ? j : (j + 1) * layers / kept - 1)] = true;
    std::vector<int> dropped;
    for (int l = 0; l < layers; ++l)
        if (!keep[size_t(l)])
            dropped.push_back(l);
    return dropped;
}

std::string depthSweepProblem(const Model &model)
{
    const ModelConfig &c = model.config;
    if (c.task.empty())
        return model.name + " names no task to score: it was not trained on one of the project's tasks (train --task)";
    if (c.reversible || c.isEncoderDecoder())
        return model.name + " has two stacks or reversible blocks";
    return {};
}

DepthSweep depthSweep(std::shared_ptr<const Model> model, int examples)
{
    if (const std::string why = depthSweepProblem(*model); !why.empty())
        throw Error("pruning blocks scores a model of one stack on its own task: " + why);
    const ModelConfig &c = model->config;
    DepthSweep sweep;
    sweep.model = model->name;
    sweep.task = c.task;
    sweep.layers = c.layers;
    sweep.examples = examples;
    const std::unique_ptr<Task> task = Task::create(c.task, c.context);
    for (PruneRule rule : {PruneRule::First, PruneRule::EveryOther})
        for (int k = 1; k <= c.layers; ++k) {
            PrunedDepth d;
            d.kept = k;
            d.dropped = droppedBlocks(rule, k, c.layers);
            d.score = evaluateOnTask(model, *task, examples, 12345, 1, {}, d.dropped);
            (rule == PruneRule::First ? sweep.first : sweep.everyOther).push_back(std::move(d));
        }
    return sweep;
}

StepSweep stepSweep(
    std::shared_ptr<const Model> model, int maxSteps, int examples, const std::function<bool(int)> &scored)
{
    if (const std::string why = depthSweepProblem(*model); !why.empty())
        throw Error("a step sweep scores a model of one stack on its own task: " + why);
    model->withDepth(maxSteps, "--step-sweep"); // refuses a model of blocks of its own, or too many steps
    StepSweep sweep;
    sweep.model = model->name;
    sweep.task = model->config.task;
    sweep.trained = model->config.layers;
    sweep.examples = examples;
    const std::unique_ptr<Task> task = Task::create(model->config.task, model->config.context);
    for (int s = 1; s <= maxSteps; ++s) {
        sweep.scores.push_back(
            evaluateOnTask(std::make_shared<const Model>(model->withDepth(s, "--step-sweep")), *task, examples));
        if (scored && !scored(s))
            break;
    }
    return sweep;
}

} // namespace atlas
