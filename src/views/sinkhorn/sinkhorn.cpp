#include "sinkhorn/sinkhorn.h"

#include "analysis/headchoice.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Sinkhorn view (Sparse Sinkhorn attention): its descriptor and its analysis request.
namespace atlas::views::sinkhorn {

namespace {

using namespace atlas::analysis;

// The input's sort and attention at the spec's layer and head, and the held-out score of the spec's model and
// baseline_model.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (const std::string why = sinkhornProblem(*c.model); !why.empty())
        return problem("Sparse Sinkhorn attention sorts blocks of the sequence with a learned network: " + why
            + ". Open austen-mlm-sinkhorn.");
    const int head = std::max(spec.head, 0); // −1, every head elsewhere: the first here
    if (const std::string why = headChoiceProblem(*c.model, spec.layer, head); !why.empty())
        return problem(why);
    AnalysisRequest r;
    const int examples = c.heldOutExamples(SinkhornAnalysis::kExamples);
    r.key = "sinkhorn/" + modelIdentity(*c.model) + "/" + inputKey(c) + "/" + std::to_string(examples);
    r.pinned.push_back(c.model->wte);
    r.run = [model = c.model, tokens = c.tokenIds, layer = spec.layer, head, other = spec.baselineModel, examples](
                const std::atomic<bool> &cancel) {
        return timedResult<SinkhornAnalysis>([&](SinkhornAnalysis &result) {
            static ResultCache<HeldOutScore> sortOff;
            result.picture = sinkhornPicture(model, tokens, layer, head);
            if (!scoreWithBaseline(model, other, examples, cancel, result.scores) || model->config.task.empty())
                return;
            const auto off = sortOff.findOrMake(weightsFingerprint(*model) + "/" + std::to_string(examples),
                [&]() -> std::shared_ptr<const HeldOutScore> {
                    auto made = std::make_shared<HeldOutScore>(sortSwitchedOffScore(model, examples));
                    return cancel.load() ? nullptr : made;
                });
            if (off)
                result.sortOff = *off;
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "sinkhorn",
        .title = "Sinkhorn",
        .summary = "Sparse Sinkhorn attention: a learned network sorts the blocks, each block attends to itself and "
                   "its sorted block; the sort matrix, one head's attention, and what it costs a masked LM",
        .group = "Efficiency",
        .request = request,
        .analysisKeys = {"layer", "head", "baseline_model"},
        .after = "pattern"};
}

} // namespace atlas::views::sinkhorn
