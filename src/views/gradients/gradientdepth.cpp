#include "gradients/gradientdepth.h"

#include "engine/engine.h"
#include "model/parameterlist.h"
#include "train/backprop.h"
#include "train/memorystrategy.h"
#include "train/task.h"
#include "util/error.h"
#include "util/memorycheck.h"

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

enum class Sublayer { None, Attention, FeedForward };

Sublayer sublayerOf(BlockPart part)
{
    switch (part) {
    case BlockPart::Q:
    case BlockPart::K:
    case BlockPart::V:
    case BlockPart::Qkv:
    case BlockPart::Out:
        return Sublayer::Attention;
    case BlockPart::Up:
    case BlockPart::Down:
    case BlockPart::Gate:
    case BlockPart::ExpertsGateUp:
    case BlockPart::ExpertsDown:
        return Sublayer::FeedForward;
    default:
        return Sublayer::None;
    }
}

double squaredNorm(const Gradients &g, const std::string &name)
{
    const auto found = g.grads.find(name);
    if (found == g.grads.end())
        throw Error("the backward pass gave no gradient for " + name);
    double sum = 0;
    for (const float v : found->second.values())
        sum += double(v) * double(v);
    return sum;
}

// The built-in task a model was trained on, or nullptr (none, or one this program does not know).
std::unique_ptr<Task> builtInTask(const ModelConfig &config)
{
    const std::vector<std::string> tasks = Task::names();
    if (std::find(tasks.begin(), tasks.end(), config.task) == tasks.end())
        return nullptr;
    return Task::create(config.task, config.context);
}

} // namespace

std::string gradientDepthProblem(const Model &model)
{
    if (model.config.isEncoderDecoder())
        return "an encoder-decoder has two stacks of blocks, and this view follows one";
    return {};
}

std::vector<int> gradientTargets(const ModelConfig &config, const Input &input)
{
    const int64_t T = int64_t(input.tokens.size());
    const std::unique_ptr<Task> task = builtInTask(config);
    std::vector<int> targets = task ? task->targetsOf(input.tokens) : objectiveTargets(config.causal, input.tokens);
    for (const int p : input.padding) {
        if (p >= 0 && p < T)
            targets[size_t(p)] = -1;
        if (config.causal && p >= 1 && p <= T) // nothing predicts a padding token either
            targets[size_t(p - 1)] = -1;
    }
    return targets;
}

GradientDepth gradientDepth(std::shared_ptr<const Model> model, const Input &input, std::optional<FreshWeights> fresh)
{
    if (const std::string why = gradientDepthProblem(*model); !why.empty())
        throw Error("gradients by depth: " + why);
    ModelConfig c = model->config; // a copy: `model` may become the fresh weights
    if (fresh && fresh->blocks != 0 && fresh->blocks != c.layers) {
        if (fresh->blocks < 1 || fresh->blocks > kMaxFreshBlocks)
            throw Error("gradients by depth: " + std::to_string(fresh->blocks) + " fresh blocks; give 1 to "
                + std::to_string(kMaxFreshBlocks) + ", or 0 for the model's " + std::to_string(c.layers));
        c.layers = fresh->blocks;
        c.validate(model->name + " with " + std::to_string(fresh->blocks) + " blocks");
    }
    // The gradients (a float per parameter), the traced activations and, for fresh weights, those weights: the
    // model itself is already in memory.
    const double parameters = double(Model::parameterCountOf(c)),
                 bytes
        = 4 * parameters * (fresh ? 2 : 1) + double(predictedActivationBytes(c, int(input.tokens.size()), {}));
    checkFitsInMemory(bytes,
        "a backward pass of " + model->name + (fresh ? " with fresh weights" : "") + " on "
            + std::to_string(input.tokens.size()) + " tokens");
    if (fresh) {
        auto twin = std::make_shared<Model>(Model::random(c, kInitialisationSeed, fresh->init));
        twin->name = model->name;
        model = std::move(twin);
    }
    const std::vector<int> targets = gradientTargets(c, input);
    GradientDepth out;
    out.model = model->name;
    out.initialised = fresh.has_value();
    out.init = fresh ? fresh->init : WeightInit::Family;
    out.placement = c.layerNorm;
    for (const int t : targets)
        out.targets += t >= 0;
    if (out.targets == 0) {
        if (const std::unique_ptr<Task> task = builtInTask(c))
            throw Error("gradients by depth: the " + c.task + " task asks " + model->name
                + " to predict nothing in this text (" + task->summary() + ")");
        throw Error("gradients by depth: no position has a token to predict (give at least two tokens)");
    }
    Engine engine(model, input);
    engine.runToEnd();
    const Gradients g = backward(*model, input, engine.trace(), targets);
    out.loss = g.loss;
    for (int layer = 0; layer < c.layers; ++layer) {
        double attention = 0, feedForward = 0;
        for (const BlockParameter &p : blockParameters(c, names::kOnlyStack, layer)) {
            const Sublayer s = p.bias ? Sublayer::None : sublayerOf(p.part);
            if (s == Sublayer::None)
                continue;
            (s == Sublayer::Attention ? attention : feedForward)
                += squaredNorm(g, blockParameterName(c, names::kOnlyStack, layer, p));
        }
        if (c.isMoeLayer(layer) && !c.stacksExperts()) // each expert's own matrices
            for (int e = 0; e < c.experts; ++e)
                for (const BlockParameter &p : expertParameters(c))
                    if (!p.bias)
                        feedForward += squaredNorm(g, expertParameter(c, layer, e, p.part) + ".weight");
        out.attention.push_back(std::sqrt(attention));
        out.feedForward.push_back(std::sqrt(feedForward));
    }
    return out;
}

} // namespace atlas
