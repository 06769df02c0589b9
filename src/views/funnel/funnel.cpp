#include "funnel/funnel.h"

#include "analysis/headchoice.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Funnel view (Funnel-Transformer): its descriptor and its analysis request.
namespace atlas::views::funnel {

namespace {

using namespace atlas::analysis;

// The input's funnel at the spec's layer and head, and the held-out score of the spec's model and baseline_model.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (const std::string why = funnelProblem(*c.model); !why.empty())
        return problem("Funnel-Transformer pools the sequence between groups of layers: " + why + ".");
    const int head = std::max(spec.head, 0); // −1, every head elsewhere: the first here
    if (const std::string why = headChoiceProblem(*c.model, spec.layer, head); !why.empty())
        return problem(why);
    AnalysisRequest r;
    const int examples = c.heldOutExamples(FunnelAnalysis::kExamples);
    r.key = "funnel/" + modelIdentity(*c.model) + "/" + inputKey(c) + "/" + std::to_string(examples);
    r.pinned.push_back(c.model->wte);
    r.run = [model = c.model, tokens = c.tokenIds, layer = spec.layer, head, other = spec.baselineModel, examples](
                const std::atomic<bool> &cancel) {
        return timedResult<FunnelAnalysis>([&](FunnelAnalysis &result) {
            result.picture = funnelPicture(model, tokens, layer, head);
            scoreWithBaseline(model, other, examples, cancel, result.scores);
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "funnel",
        .title = "Funnel",
        .summary = "Funnel-Transformer: the sequence pooled to half its length between groups of layers, one "
                   "head's attention at each resolution, and what the pooling costs a masked LM",
        .group = "Adaptive",
        .request = request,
        .analysisKeys = {"layer", "head", "baseline_model"},
        .after = "token-reduction"};
}

} // namespace atlas::views::funnel
