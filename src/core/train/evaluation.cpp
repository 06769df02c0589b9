#include "train/evaluation.h"

#include "engine/engine.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

Evaluation evaluate(std::shared_ptr<const Model> model, const Task &task, int examples, uint64_t seed, int lengthScale,
    const InputAdjustment &adjust)
{
    std::mt19937_64 rng(seed);
    std::vector<Example> set;
    size_t longest = 0;
    for (int i = 0; i < examples; ++i) {
        set.push_back(lengthScale == 1 ? task.sample(rng, true) : task.sampleLonger(rng, lengthScale));
        longest = std::max({longest, set.back().tokens.size(), set.back().source.size()});
    }
    model = stretchedForLength(model, longest); // these kinds compute any position
    if (longest > size_t(model->config.context))
        throw Error("examples of up to " + std::to_string(longest) + " tokens do not fit the model's "
            + std::to_string(model->config.context)
            + " learned positions: a learned table has no row past the length it was trained for");
    struct Score
    {
        double loss = 0;
        int targets = 0, correct = 0;
        bool exact = true;
        std::vector<double> lossAt; // [t]: the target's cross-entropy at position t; NaN without a target
    };
    std::vector<Score> scores(set.size());
    parallelFor(static_cast<int64_t>(set.size()), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            Input input = inputOf(set[size_t(i)]);
            adjust(input, set[size_t(i)]);
            Engine engine(model, std::move(input), {false});
            engine.runToEnd();
            const Tensor &probs = engine.trace().tensor("next_probs");
            const int64_t V = probs.dim(1);
            Score &s = scores[size_t(i)];
            s.lossAt.assign(set[size_t(i)].targets.size(), std::nan(""));
            for (size_t t = 0; t < set[size_t(i)].targets.size(); ++t) {
                const int target = set[size_t(i)].targets[t];
                if (target < 0)
                    continue;
                const float *row = probs.data() + int64_t(t) * V;
                const bool right = std::max_element(row, row + V) - row == target;
                s.lossAt[t] = -std::log(std::max(row[target], 1e-30f));
                s.loss += s.lossAt[t];
                ++s.targets;
                s.correct += right;
                s.exact = s.exact && right;
            }
        }
    });
    Evaluation e;
    int targets = 0, correct = 0, exact = 0;
    double loss = 0;
    std::vector<int> atPosition;
    for (const Score &s : scores) {
        loss += s.loss;
        targets += s.targets;
        correct += s.correct;
        exact += s.exact;
        if (s.lossAt.size() > e.positionLoss.size()) {
            e.positionLoss.resize(s.lossAt.size(), 0.0);
            atPosition.resize(s.lossAt.size(), 0);
        }
        for (size_t t = 0; t < s.lossAt.size(); ++t)
            if (!std::isnan(s.lossAt[t])) {
                e.positionLoss[t] += s.lossAt[t];
                ++atPosition[t];
            }
    }
    for (size_t t = 0; t < e.positionLoss.size(); ++t)
        e.positionLoss[t] = atPosition[t] > 0 ? e.positionLoss[t] / atPosition[t] : std::nan("");
    e.loss = static_cast<float>(loss / std::max(targets, 1));
    e.tokenAccuracy = float(correct) / float(std::max(targets, 1));
    e.exactMatch = float(exact) / float(std::max<size_t>(set.size(), 1));
    return e;
}

} // namespace

Evaluation evaluateOnTask(std::shared_ptr<const Model> model, const Task &task, int examples, uint64_t seed,
    int lengthScale, const HeadAblation &ablation, const std::vector<int> &droppedLayers)
{
    return evaluate(model, task, examples, seed, lengthScale, [&](Input &input, const Example &) {
        input.ablation = ablation;
        input.droppedLayers = droppedLayers;
    });
}

Evaluation evaluateAdjusted(
    std::shared_ptr<const Model> model, const Task &task, int examples, uint64_t seed, const InputAdjustment &adjust)
{
    return evaluate(std::move(model), task, examples, seed, 1, adjust);
}

HeldOutScore heldOutScore(std::shared_ptr<const Model> model, int examples, const std::atomic<bool> *cancel)
{
    HeldOutScore s;
    if (model->config.task.empty() || (cancel && cancel->load()))
        return s;
    const std::unique_ptr<Task> task = Task::create(model->config.task, model->config.context);
    s.evaluation = evaluateOnTask(model, *task, examples);
    if (cancel && cancel->load())
        return s;
    s.model = model->name;
    s.work = model->config.funnel.workShare(model->config.context);
    return s;
}

} // namespace atlas
