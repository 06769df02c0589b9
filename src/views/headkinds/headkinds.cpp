#include "headkinds/headkinds.h"

#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

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

// One run of the model on the repeated sequence: random tokens, keyed by the weights alone, or the input's tokens
// twice, keyed by the input too. The kind and the threshold shown change nothing to compute.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model)
        return problem(kNothingComputed);
    const bool fromInput = spec.get(kHeadSequence) == "input";
    std::vector<int> tokens;
    if (fromInput) {
        if (c.tokenIds.size() < 2)
            return problem("The input twice needs an input of at least 2 tokens: type one, or choose random tokens.");
        tokens.assign(c.tokenIds.begin(),
            c.tokenIds.begin() + std::min<ptrdiff_t>(ptrdiff_t(c.tokenIds.size()), c.model->config.context / 2));
        tokens.insert(tokens.end(), tokens.begin(), tokens.end());
    }
    AnalysisRequest r;
    r.key = "head-kinds/" + modelIdentity(*c.model) + (fromInput ? "/" + inputKey(c) : std::string("/random"));
    r.pinned = {c.model->wte};
    r.run = [model = c.model, tokens, fromInput](const std::atomic<bool> &cancel) {
        return timedResult<HeadKindsAnalysis>([&](HeadKindsAnalysis &result) {
            result.fromInput = fromInput;
            result.classes = classifyHeads(model,
                fromInput ? tokens : repeatedRandomTokens(model->config, HeadKindsAnalysis::kHalf, 0), &cancel, true);
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
        .readsEveryBlocksHeads = true,
        .request = request,
        .analysisKeys = {kHeadSequence.name},
        .alsoReads = {"scale"},
        .after = "logit-attribution",
        .keys = {{.field = kHeadKind,
                     .type = "string",
                     .meaning = "head-kinds view: the score the gallery sorts and filters the heads by",
                     .choices = kindNames(),
                     .ownedByView = true},
            {.field = kHeadSequence,
                .type = "string",
                .meaning = "head-kinds view: the sequence the heads are scored on, `random` (32 distinct random "
                           "tokens, then the same again) or `input` (the input's tokens, then the same again)",
                .choices = {"random", "input"},
                .ownedByView = true},
            {.field = kMinScore,
                .type = "number, 0 ≤ s ≤ 1",
                .meaning = "head-kinds view: the least score a head needs to be shown",
                .maximum = 1,
                .zeroAllowed = true,
                .ownedByView = true}}};
}

} // namespace atlas::views::headkinds
