#include "analysis/headimportance.h"

#include "engine/engine.h"
#include "trace/names.h"
#include "train/task.h"
#include "util/error.h"

#include <random>

namespace atlas {

namespace {

constexpr uint64_t kReferenceSeed = 4242; // apart from evaluateOnTask's default 12345

std::unique_ptr<Task> taskOf(const Model &model)
{
    if (model.config.task.empty())
        throw Error("model " + model.name
            + " names no task: it was not trained on one of the project's tasks (train --task), so there are no "
              "held-out "
              "examples to score it on");
    return Task::create(model.config.task, model.config.context);
}

std::vector<float> nextTokenRow(const Engine &engine, int position)
{
    const Tensor row = engine.nextTokenProbs({position});
    return {row.data(), row.data() + row.numel()};
}

} // namespace

std::vector<std::vector<int>> ablationReferences(const Model &model, const std::vector<int> &input, int examples)
{
    if (model.config.task.empty()) {
        if (input.empty())
            throw Error("mean ablation needs sequences to average over: model " + model.name
                + " names no task (it was not trained by train --task) and no input was given");
        return {input};
    }
    const auto task = Task::create(model.config.task, model.config.context);
    std::mt19937_64 rng(kReferenceSeed);
    std::vector<std::vector<int>> out;
    for (int i = 0; i < examples; ++i)
        out.push_back(task->sample(rng, true).tokens);
    return out;
}

HeadAblation makeHeadAblation(std::shared_ptr<const Model> model, const std::vector<HeadRef> &heads,
    HeadAblation::Mode mode, const std::vector<std::vector<int>> &references)
{
    HeadAblation ablation;
    ablation.mode = mode;
    for (const HeadRef &h : heads)
        ablation.heads.push_back({h.layer, h.head, {}});
    if (mode == HeadAblation::Mode::Zero || heads.empty())
        return ablation;
    if (references.empty())
        throw Error("mean ablation needs at least one reference sequence to average over");
    const int64_t d = model->config.headDim();
    std::vector<std::vector<double>> sums(heads.size(), std::vector<double>(size_t(d), 0.0));
    int64_t positions = 0;
    for (const std::vector<int> &tokens : references) {
        Engine engine(model, {tokens, {}});
        engine.runToEnd();
        for (size_t i = 0; i < heads.size(); ++i) {
            const Tensor &context = engine.trace().tensor(names::layerTensor(heads[i].layer, "attn.context"));
            const auto slice = context.slice(heads[i].head); // [T, d]
            for (int64_t c = 0; c < d; ++c)
                sums[i][size_t(c)] += slice.col(c).cast<double>().sum();
        }
        positions += int64_t(tokens.size());
    }
    for (size_t i = 0; i < heads.size(); ++i)
        for (int64_t c = 0; c < d; ++c)
            ablation.heads[i].mean.push_back(float(sums[i][size_t(c)] / double(positions)));
    return ablation;
}

AblationComparison compareAblation(std::shared_ptr<const Model> model, const Input &input, int position,
    const HeadAblation &ablation, int examples, const Evaluation *baseline)
{
    if (position < 0 || position >= int(input.tokens.size()))
        throw Error("position " + std::to_string(position) + " is outside the input (0.."
            + std::to_string(int(input.tokens.size()) - 1) + ")");
    AblationComparison out;
    Engine whole(model, input, {false});
    whole.runToEnd();
    out.before = nextTokenRow(whole, position);
    Input withAblation = input;
    withAblation.ablation = ablation;
    Engine ablated(model, std::move(withAblation), {false});
    ablated.runToEnd();
    out.after = nextTokenRow(ablated, position);
    if (!model->config.task.empty()) {
        const auto task = taskOf(*model);
        out.scored = true;
        out.baseline = baseline ? *baseline : evaluateOnTask(model, *task, examples);
        out.ablated = evaluateOnTask(model, *task, examples, 12345, 1, ablation);
    }
    return out;
}

HeadImportance headImportance(std::shared_ptr<const Model> model, HeadAblation::Mode mode, int examples,
    const std::function<bool(int, int)> &progress)
{
    const auto task = taskOf(*model);
    const int L = model->config.layers, H = model->config.heads, total = L * H + 1;
    std::vector<HeadRef> every;
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h)
            every.push_back({l, h});
    // One pass over the references gives every head's mean.
    const HeadAblation all = makeHeadAblation(model, every, mode, ablationReferences(*model, {}));
    HeadImportance out;
    out.mode = mode;
    out.examples = examples;
    out.baseline = evaluateOnTask(model, *task, examples);
    out.without.assign(size_t(L), std::vector<Evaluation>(size_t(H)));
    int done = 1;
    for (const HeadAblation::Head &head : all.heads) {
        if (progress && !progress(done, total))
            return {};
        HeadAblation one;
        one.mode = mode;
        one.heads = {head};
        out.without[size_t(head.layer)][size_t(head.head)] = evaluateOnTask(model, *task, examples, 12345, 1, one);
        ++done;
    }
    if (progress)
        progress(total, total);
    return out;
}

} // namespace atlas
