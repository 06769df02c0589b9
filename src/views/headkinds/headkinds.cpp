#include "headkinds/headkinds.h"

#include "view/analysishelpers.h"
#include "view/viewkinds.h"

// The Head kinds view: its descriptor and its analysis request.
namespace atlas::views::headkinds {

namespace {

using namespace atlas::analysis;

std::vector<std::string> kindNames()
{
    std::vector<std::string> names;
    for (int k = 0; k < kHeadClassCount; ++k)
        names.push_back(headClassName(HeadClass(k)));
    return names;
}

// One run of the model on the repeated random sequence, whatever the input: keyed by the weights alone, so the kind
// and the threshold shown change nothing to compute.
AnalysisRequest request(const ViewSpec &, const AnalysisContext &c)
{
    if (!c.model)
        return problem(kNothingComputed);
    AnalysisRequest r;
    r.key = "head-kinds/" + modelIdentity(*c.model);
    r.pinned = {c.model->wte};
    r.run = [model = c.model](const std::atomic<bool> &cancel) {
        return timedResult<HeadKindsAnalysis>([&](HeadKindsAnalysis &result) {
            result.classes
                = classifyHeads(model, repeatedRandomTokens(model->config, HeadKindsAnalysis::kHalf, 0), &cancel, true);
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "head-kinds",
        .title = "Head kinds",
        .summary = "every head scored as a previous-token, induction, duplicate-token, first-token, self, local or "
                   "copying head, sorted, with its attention on a repeated random sequence",
        .group = "Circuits",
        .showsEncoderDecoder = true,
        .request = request,
        .after = "logit-attribution",
        .keys = {{.field = kHeadKind,
                     .type = "string",
                     .meaning = "head-kinds view: the score the gallery sorts and filters the heads by",
                     .choices = kindNames(),
                     .ownedByView = true},
            {.field = kMinScore,
                .type = "number, 0 ≤ s ≤ 1",
                .meaning = "head-kinds view: the least score a head needs to be shown",
                .maximum = 1,
                .zeroAllowed = true,
                .ownedByView = true}}};
}

} // namespace atlas::views::headkinds
