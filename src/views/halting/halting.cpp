#include "halting/halting.h"

#include "engine/engine.h"
#include "model/model.h"
#include "trace/names.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace atlas {

namespace {

// The scored positions: (surprise, ponder) pairs.
std::vector<std::pair<double, double>> scored(const HaltingAnalysis &a)
{
    std::vector<std::pair<double, double>> pairs;
    for (int t = 0; t < a.tokens; ++t)
        if (std::isfinite(a.surprise[size_t(t)]))
            pairs.emplace_back(a.surprise[size_t(t)], a.ponder[size_t(t)]);
    return pairs;
}

} // namespace

double HaltingAnalysis::meanPonder() const
{
    return ponder.empty() ? 0 : std::accumulate(ponder.begin(), ponder.end(), 0.0) / double(ponder.size());
}

double HaltingAnalysis::quarterPonder(bool hardest) const
{
    std::vector<std::pair<double, double>> pairs = scored(*this);
    if (pairs.size() < 4)
        return std::numeric_limits<double>::quiet_NaN();
    std::sort(pairs.begin(), pairs.end());
    const size_t quarter = pairs.size() / 4;
    double sum = 0;
    for (size_t i = 0; i < quarter; ++i)
        sum += pairs[hardest ? pairs.size() - 1 - i : i].second;
    return sum / double(quarter);
}

double HaltingAnalysis::correlation() const
{
    const std::vector<std::pair<double, double>> pairs = scored(*this);
    if (pairs.size() < 3)
        return std::numeric_limits<double>::quiet_NaN();
    double mx = 0, my = 0;
    for (const auto &[x, y] : pairs) {
        mx += x / double(pairs.size());
        my += y / double(pairs.size());
    }
    double sxy = 0, sxx = 0, syy = 0;
    for (const auto &[x, y] : pairs) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : std::numeric_limits<double>::quiet_NaN();
}

} // namespace atlas

// The Halting view: its descriptor and its analysis request.
namespace atlas::views::halting {

namespace {

using namespace atlas::analysis;

// The mean N of a byte-level model's spaces, vowels, other letters and other characters, the token ids being bytes.
std::vector<std::pair<std::string, double>> stepsByCharacter(
    const std::vector<int> &steps, const std::vector<int> &bytes)
{
    const std::vector<std::string> kinds = {"spaces", "vowels", "other letters", "other characters"};
    std::vector<double> sum(kinds.size(), 0.0);
    std::vector<int> count(kinds.size(), 0);
    for (size_t t = 0; t < steps.size() && t < bytes.size(); ++t) {
        const int b = bytes[t];
        const bool letter = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
        const size_t kind = b == ' '                                                 ? 0
            : letter && std::string("aeiouAEIOU").find(char(b)) != std::string::npos ? 1
            : letter                                                                 ? 2
                                                                                     : 3;
        sum[kind] += steps[t];
        ++count[kind];
    }
    std::vector<std::pair<std::string, double>> out;
    for (size_t k = 0; k < kinds.size(); ++k)
        out.emplace_back(kinds[k], count[k] > 0 ? sum[k] / count[k] : std::numeric_limits<double>::quiet_NaN());
    return out;
}

// The analysis of a run's trace: the halting op's tensors and the logits, the surprise per position computed from them.
void readHalting(HaltingAnalysis &a, const Model &model, const Trace &trace, const std::vector<int> &tokens)
{
    const Tensor &halting = trace.tensor(names::haltingTensor("halting")),
                 &weights = trace.tensor(names::haltingTensor("weights")), &logits = trace.tensor("logits");
    a.layers = int(halting.dim(1));
    a.tokens = int(halting.dim(0));
    a.trained = model.config.layers;
    a.epsilon = model.config.act.epsilon;
    a.sharedBlock = model.config.shared.enabled;
    a.halting.assign(halting.data(), halting.data() + halting.numel());
    a.weights.assign(weights.data(), weights.data() + weights.numel());
    const Tensor &steps = trace.tensor(names::haltingTensor("steps")),
                 &ponder = trace.tensor(names::haltingTensor("ponder"));
    for (int t = 0; t < a.tokens; ++t) {
        a.steps.push_back(int(steps.data()[t]));
        a.ponder.push_back(ponder.data()[t]);
        double surprise = std::numeric_limits<double>::quiet_NaN();
        if (model.config.causal && t + 1 < a.tokens && t + 1 < int(tokens.size())) {
            const auto row = logits.matrix().row(t).cast<double>();
            const double top = row.maxCoeff();
            surprise = top + std::log((row.array() - top).exp().sum()) - row(tokens[size_t(t + 1)]);
        }
        a.surprise.push_back(surprise);
    }
    if (model.config.tokenizer == "bytes")
        a.stepsByCharacter = stepsByCharacter(a.steps, tokens);
}

// The session's run read as it is; with `max_steps` set to another count than the model's, a run of the input with its
// shared block applied at most that many times.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace)
        return problem(kNothingComputed);
    if (!c.model->config.act.enabled)
        return problem("The Halting view shows adaptive computation time, and " + c.model->name
            + " has no halting unit: every token runs every block. Open austen-act.");
    const int trained = c.model->config.layers, depth = spec.get(kMaxSteps) > 0 ? spec.get(kMaxSteps) : trained;
    if (depth != trained && !c.model->config.shared.enabled)
        return problem("max_steps " + std::to_string(depth) + ": " + c.model->name
            + " has a block of its own at each of its " + std::to_string(trained)
            + " layers; only a model whose layers share one block (a Universal Transformer, "
            + "austen-ut) runs it another number of times. Set max_steps to 0 for the model's own.");
    AnalysisRequest r;
    if (depth != trained) {
        if (c.tokenIds.empty())
            return problem(kNothingComputed);
        ModelConfig deeper = c.model->config;
        deeper.layers = depth;
        if (auto over = overBudgetRequest(c, "a run with the block applied up to " + std::to_string(depth) + " times",
                Model::forwardFlopsOf(deeper, int(c.tokenIds.size())), 0))
            return *over;
        r.key = "halting/" + modelIdentity(*c.model) + "/" + inputKey(c);
        r.pinned.push_back(c.model->wte);
        const size_t budget = c.budget.traceBytes();
        r.run = [model = c.model, input = inputOf(c), depth, budget](const std::atomic<bool> &) {
            return timedResult<HaltingAnalysis>([&](HaltingAnalysis &a) {
                EngineOptions options;
                options.memoryBudget = budget;
                Engine engine(std::make_shared<const Model>(model->withDepth(depth, "depth")), input, options);
                engine.runToEnd();
                readHalting(a, *model, engine.trace(), input.tokens);
            });
        };
        return r;
    }
    if (!c.trace->contains(names::haltingTensor("ponder")) || !c.trace->contains("logits"))
        return problem("The halting is computed after the last block: run to the end (past act.out and logits).");
    const Tensor &weights = c.trace->tensor(names::haltingTensor("weights")), &logits = c.trace->tensor("logits");
    r.key = "halting" + identity(weights) + identity(logits);
    r.pinned = {weights, c.trace->tensor(names::haltingTensor("halting")),
        c.trace->tensor(names::haltingTensor("steps")), c.trace->tensor(names::haltingTensor("ponder")), logits};
    r.run = [model = c.model, trace = c.trace, tokens = c.tokenIds](const std::atomic<bool> &) {
        return timedResult<HaltingAnalysis>([&](HaltingAnalysis &a) { readHalting(a, *model, *trace, tokens); });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "halting",
        .title = "Halting",
        .summary = "adaptive computation time: how many blocks each token runs before its halting unit stops it, "
                   "and how that follows what the token has to predict",
        .group = "Adaptive",
        .request = request,
        .analysisKeys = {kMaxSteps.name},
        .after = "funnel",
        .keys = {{.field = kMaxSteps,
            .type = "int 0 … 64",
            .meaning = "halting view: a shared block with halting (a Universal Transformer, `austen-ut`) applied at "
                       "most this many times on the input; 0 = the count it was trained with",
            .rule = ">= 0, or 0 for the count the model was trained with",
            .check =
                [](const ViewSpec &s) {
                    return s.get(kMaxSteps) > Model::kMaxSharedSteps
                        ? "at most " + std::to_string(Model::kMaxSharedSteps) + " applications"
                        : std::string();
                },
            .ownedByView = true,
            .perModel = true}}};
}

} // namespace atlas::views::halting
