#include "lostinthemiddle/lostinthemiddle.h"

#include "model/builtinmodels.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Lost in the middle view: its descriptor and its analysis request.
namespace atlas::views::lostinthemiddle {

namespace {

using namespace atlas::analysis;

// The spec's model, and baseline_model's, asked for each pair of held-out contexts in turn: held-out evaluations, so
// it runs once per pair of models.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model)
        return problem(kNothingComputed);
    if (const std::string why = retrievalProblem(*c.model); !why.empty())
        return problem(
            "Lost in the middle asks a key\u2013value retrieval model for each of its pairs in turn: " + why + ".");
    AnalysisRequest r;
    const int examples = c.heldOutExamples(LostInTheMiddleAnalysis::kExamples);
    r.key = "middle/" + modelIdentity(*c.model) + "/" + std::to_string(examples);
    r.pinned.push_back(c.model->wte);
    r.run = [model = c.model, other = spec.baselineModel, examples](const std::atomic<bool> &cancel) {
        return timedResult<LostInTheMiddleAnalysis>([&](LostInTheMiddleAnalysis &result) {
            result.sweeps.push_back(retrievalByPosition(model, examples, &cancel));
            if (!other.empty() && !cancel.load())
                result.sweeps.push_back(retrievalByPosition(loadModel(other), examples, &cancel));
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "lost-in-the-middle",
        .title = "Lost in the middle",
        .summary = "a key\u2013value retrieval model asked for each pair in turn: accuracy by where the pair "
                   "stands in the context, and where the answer looks",
        .group = "Research",
        .request = request,
        .analysisKeys = {"baseline_model"},
        .after = "layerdrop"};
}

} // namespace atlas::views::lostinthemiddle
