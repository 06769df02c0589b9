#include "steps/steps.h"

#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "trace/names.h"
#include "util/error.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>
#include <cmath>

namespace atlas::views::steps {

namespace {

using namespace atlas::analysis;

// Why `model` cannot be stepped another number of times ("" when it can).
std::string stepsProblem(const Model &model)
{
    if (!model.config.shared.enabled)
        return model.name + " has a block of its own at each of its " + std::to_string(model.config.layers)
            + " layers; only a model whose layers share one block (a Universal Transformer) runs it another number of "
              "times";
    return depthSweepProblem(model);
}

// The change each of S applications makes to the input's residual stream (StepCurve::change).
std::vector<double> changePerStep(const Model &model, const Input &input, int steps, size_t budget)
{
    EngineOptions options;
    options.memoryBudget = budget;
    Engine engine(std::make_shared<const Model>(model.withDepth(steps, "depth")), input, options);
    engine.runToEnd();
    std::vector<double> change;
    for (int n = 1; n <= steps; ++n) {
        const auto before = engine.trace().tensor(names::residualStream(n - 1)).matrix().cast<double>();
        const auto after = engine.trace().tensor(names::residualStream(n)).matrix().cast<double>();
        double sum = 0;
        for (Eigen::Index t = 0; t < before.rows(); ++t)
            sum += (after.row(t) - before.row(t)).norm() / std::max(before.row(t).norm(), 1e-30);
        change.push_back(sum / double(std::max<Eigen::Index>(1, before.rows())));
    }
    return change;
}

StepCurve stepCurve(std::shared_ptr<const Model> model, const Input &input, int steps, int examples, size_t budget,
    const std::function<bool(int)> &scored, const std::atomic<bool> &cancel)
{
    StepCurve curve;
    curve.sweep = stepSweep(model, steps, examples, scored);
    if (!cancel.load()) // a cancelled sweep's result is dropped: no run of the input after it
        curve.change = changePerStep(*model, input, steps, budget);
    return curve;
}

// Every step count's held-out sweep, then one run of the input at S steps, for the spec's model and baseline_model.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (const std::string why = stepsProblem(*c.model); !why.empty())
        return problem("The Steps view applies a shared block another number of times: " + why
            + ". Open austen-ut or austen-shared.");
    const int steps = stepsOf(spec.depth, c.model->config.layers);
    const int examples = c.heldOutExamples(StepsAnalysis::kExamples);
    double flops = 0;
    for (int s = 1; s <= steps; ++s) {
        ModelConfig deeper = c.model->config;
        deeper.layers = s;
        flops += double(examples) * Model::forwardFlopsOf(deeper, deeper.context);
    }
    const int models = spec.baselineModel.empty() ? 1 : 2;
    if (auto over = overBudgetRequest(c,
            std::to_string(steps) + " held-out sweeps of " + std::to_string(examples) + " examples"
                + (models == 2 ? " for each model" : ""),
            models * flops, 0))
        return *over;
    AnalysisRequest r;
    r.key = "steps/" + modelIdentity(*c.model) + "/" + inputKey(c) + "/" + std::to_string(examples);
    r.pinned.push_back(c.model->wte);
    r.progress = std::make_shared<AnalysisProgress>();
    r.progress->total = models * steps;
    const size_t budget = c.budget.traceBytes();
    r.run = [model = c.model, other = spec.baselineModel, input = inputOf(c), steps, examples, budget,
                progress = r.progress](const std::atomic<bool> &cancel) {
        return timedResult<StepsAnalysis>([&](StepsAnalysis &result) {
            result.steps = steps;
            int done = 0;
            const auto scored = [&](int) {
                progress->done = ++done;
                return !cancel.load();
            };
            result.curves.push_back(stepCurve(model, input, steps, examples, budget, scored, cancel));
            if (other.empty() || cancel.load())
                return;
            const std::shared_ptr<const Model> baseline = loadModel(other);
            if (const std::string why = stepsProblem(*baseline); !why.empty())
                throw Error("baseline_model: " + why);
            result.curves.push_back(stepCurve(baseline, input, steps, examples, budget, scored, cancel));
        });
    };
    return r;
}

} // namespace

int stepsOf(int depth, int trained)
{
    return std::min(depth > 0 ? depth : 2 * trained, Model::kMaxSharedSteps);
}

ViewKind kind()
{
    return {.kind = "steps",
        .title = "Steps",
        .summary
        = "a Universal Transformer's one block applied 1 … S times: the task's accuracy at each count, and how "
          "far each application moves the residual stream",
        .group = "Adaptive",
        .request = request,
        .analysisKeys = {"depth", "baseline_model"},
        .after = "halting"};
}

} // namespace atlas::views::steps
