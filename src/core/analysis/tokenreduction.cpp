#include "analysis/tokenreduction.h"

#include "engine/engine.h"
#include "util/error.h"

#include <algorithm>
#include <mutex>

namespace atlas {

namespace {

// A seed of its own for each example's random control, from its tokens (FNV-1a).
uint64_t seedOf(const std::vector<int> &tokens)
{
    uint64_t h = 1469598103934665603ull;
    for (int t : tokens)
        h = (h ^ uint64_t(uint32_t(t))) * 1099511628211ull;
    return h;
}

} // namespace

std::vector<int> protectedPositions(const ModelConfig &config, const std::vector<int> &tokens)
{
    std::vector<int> out;
    const int mask = config.specialToken("[MASK]"), cls = config.specialToken("[CLS]");
    for (size_t t = 0; t < tokens.size(); ++t)
        if ((mask >= 0 && tokens[t] == mask) || (cls >= 0 && tokens[t] == cls))
            out.push_back(int(t));
    return out;
}

int TokenSurvival::keptAfter(int layer) const
{
    const std::vector<bool> &row = kept.at(size_t(layer));
    return int(std::count(row.begin(), row.end(), true));
}

float retainedWork(const std::vector<int> &kept, int tokens, int layers)
{
    double sum = 0;
    int before = tokens;
    for (int j = 0; j < layers; ++j) {
        const int after = j < int(kept.size()) ? kept[size_t(j)] : before;
        sum += 0.5 * (before + after);
        before = after;
    }
    return float(sum / (double(tokens) * std::max(layers, 1)));
}

std::string tokenReductionProblem(const Model &model)
{
    const ModelConfig &c = model.config;
    if (c.causal)
        return model.name + " reads left to right; PoWER-BERT ranks the tokens an encoder attends to both ways";
    if (c.isEncoderDecoder() || c.reversible)
        return model.name + " has two stacks or reversible blocks";
    if (c.layers < 2)
        return model.name + " has one layer: no later layer would drop a token";
    return {};
}

TokenRetention::Rank parseRanking(const std::string &text, const std::string &source)
{
    if (text == "significance")
        return TokenRetention::Rank::Significance;
    if (text == "random")
        return TokenRetention::Rank::Random;
    if (text == "targets")
        return TokenRetention::Rank::Targets;
    throw Error(source + ": '" + text + "' is not a ranking (significance, random or targets)");
}

TokenSurvival tokenSurvival(std::shared_ptr<const Model> model, const std::vector<int> &tokens,
    const std::vector<float> &keep, TokenRetention::Rank rank)
{
    if (const std::string why = tokenReductionProblem(*model); !why.empty())
        throw Error("eliminating tokens: " + why);
    Input input;
    input.tokens = tokens;
    input.retention.keep = keep;
    input.retention.protect = protectedPositions(model->config, tokens);
    input.retention.rank = rank;
    input.retention.seed = seedOf(tokens);
    TokenSurvival s;
    s.rank = rank;
    s.tokens = tokens;
    s.protect = input.retention.protect;
    s.keep = keep;
    Engine engine(model, std::move(input)); // traced: an untraced run frees the significance nothing later reads
    for (int j = 0; j + 1 < model->config.layers; ++j) {
        const std::string p = "layer." + std::to_string(j) + ".";
        engine.runTo(engine.program().producerOf(p + "kept") + 1);
        const Tensor &sig = engine.trace().tensor(p + "attn.significance"), &kept = engine.trace().tensor(p + "kept");
        s.significance.emplace_back(sig.data(), sig.data() + sig.numel());
        std::vector<bool> row;
        for (int64_t k = 0; k < kept.numel(); ++k)
            row.push_back(kept.data()[k] != 0);
        s.kept.push_back(std::move(row));
    }
    return s;
}

ReductionSweep tokenReductionSweep(std::shared_ptr<const Model> model, int examples, const std::atomic<bool> *cancel)
{
    if (const std::string why = tokenReductionProblem(*model); !why.empty())
        throw Error("eliminating tokens: " + why);
    const ModelConfig &c = model->config;
    if (c.task.empty())
        throw Error("eliminating tokens: " + model->name
            + " names no task to score: it was not trained on one of the project's tasks (train --task)");
    const std::unique_ptr<Task> task = Task::create(c.task, c.context);
    ReductionSweep sweep;
    sweep.model = model->name;
    sweep.task = c.task;
    sweep.layers = c.layers;
    sweep.examples = examples;
    for (float rate : {1.0f, 0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 0.4f, 0.3f}) {
        ReductionPoint point;
        point.rate = rate;
        const TokenRetention schedule = TokenRetention::geometric(rate, c.layers);
        std::mutex lock;
        double work = 0;
        for (TokenRetention::Rank rank :
            {TokenRetention::Rank::Significance, TokenRetention::Rank::Random, TokenRetention::Rank::Targets}) {
            if (cancel && cancel->load())
                return {};
            if (rate == 1.0f && rank != TokenRetention::Rank::Significance) { // nothing eliminated: one run serves
                (rank == TokenRetention::Rank::Random ? point.random : point.targets) = point.significance;
                continue;
            }
            const Evaluation e = evaluateAdjusted(model, *task, examples, 12345, [&](Input &in, const Example &ex) {
                in.retention = schedule;
                in.retention.rank = rank;
                in.retention.seed = seedOf(ex.tokens);
                for (size_t t = 0; t < ex.targets.size(); ++t)
                    if (ex.targets[t] >= 0)
                        in.retention.protect.push_back(int(t));
                if (rank != TokenRetention::Rank::Significance)
                    return;
                std::vector<int> kept;
                for (int j = 0; j + 1 < c.layers; ++j)
                    kept.push_back(in.retention.keptAfter(j, int(in.tokens.size())));
                const std::lock_guard<std::mutex> hold(lock);
                work += retainedWork(kept, int(in.tokens.size()), c.layers);
            });
            (rank == TokenRetention::Rank::Significance    ? point.significance
                    : rank == TokenRetention::Rank::Random ? point.random
                                                           : point.targets)
                = e;
        }
        point.work = float(work / std::max(examples, 1));
        sweep.points.push_back(point);
    }
    return sweep;
}

} // namespace atlas
