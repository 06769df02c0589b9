#include "layerdrop/layerdrop.h"

#include "model/builtinmodels.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The LayerDrop view: its descriptor and its analysis request.
namespace atlas::views::layerdrop {

namespace {

using namespace atlas::analysis;

// The spec's model, and baseline_model's, scored on their task with 1 … L blocks kept: a sweep of held-out
// evaluations, so it runs once per pair of models.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model)
        return problem(kNothingComputed);
    if (const std::string why = depthSweepProblem(*c.model); !why.empty())
        return problem(
            "Pruning blocks scores a model of one stack on its own task: " + why + ". Open austen-layerdrop.");
    AnalysisRequest r;
    const int examples = c.heldOutExamples(LayerDropAnalysis::kExamples);
    r.key = "layerdrop/" + modelIdentity(*c.model) + "/" + std::to_string(examples);
    r.pinned.push_back(c.model->wte);
    r.run = [model = c.model, other = spec.baselineModel, examples](const std::atomic<bool> &cancel) {
        return timedResult<LayerDropAnalysis>([&](LayerDropAnalysis &result) {
            result.sweeps.push_back(depthSweep(model, examples));
            if (!other.empty() && !cancel.load())
                result.sweeps.push_back(depthSweep(loadModel(other), examples));
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "layerdrop",
        .title = "LayerDrop",
        .summary = "whole blocks pruned: the task's accuracy against the blocks kept, for a model trained with "
                   "LayerDrop and one without",
        .group = "Research",
        .request = request,
        .analysisKeys = {"baseline_model"},
        .after = "early-exit"};
}

} // namespace atlas::views::layerdrop
