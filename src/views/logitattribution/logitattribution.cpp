#include "logitattribution/logitattribution.h"

#include "engine/outputhead.h"
#include "model/modeltokenizer.h"
#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Direct logit attribution view: its descriptor and its analysis request.
namespace atlas::views::logitattribution {

namespace {

using namespace atlas::analysis;

// The logit (difference) at the spec's position split into what each part wrote; keyed by the traced streams, so
// stepping within the run or switching views reruns nothing.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || !c.program)
        return problem(kNothingComputed);
    if (const std::string why = logitAttributionProblem(c.model->config, *c.program, *c.trace); !why.empty())
        return problem("Direct logit attribution splits the logit into what each part wrote into the residual stream: "
            + why + ".");
    AnalysisRequest r = streamsRequest("logit-attribution/" + modelIdentity(*c.model), c);
    r.run = [model = c.model, program = c.program, trace = c.trace, input = inputOf(c), target = spec.target,
                against = spec.get(kAgainst), position = spec.position](const std::atomic<bool> &) {
        return timedResult<LogitAttributionAnalysis>([&](LogitAttributionAnalysis &result) {
            const std::unique_ptr<Tokenizer> tokenizer = tokenizerForModel(*model);
            LogitAttributionOptions options;
            options.position = position;
            options.contrast = targetId("against", against, *tokenizer, model->config.vocab);
            options.target = targetId("target", target, *tokenizer, model->config.vocab);
            if (options.target < 0) { // no target named: the model's own top token at the position
                const Tensor probs = nextTokenProbs(
                    *model, *program, *trace, input, {position < 0 ? int(input.tokens.size()) - 1 : position});
                options.target = int(std::max_element(probs.data(), probs.data() + probs.numel()) - probs.data());
            }
            result.parts = logitAttribution(*model, *program, *trace, input, options);
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "logit-attribution",
        .title = "Logit attribution",
        .summary = "direct logit attribution: how much of a logit (or a logit difference) each head, feed-forward "
                   "and the embedding wrote straight into the residual stream",
        .group = "Circuits",
        .showsEncoderDecoder = true,
        .readsEveryBlocksHeads = true,
        .request = request,
        .analysisKeys = {"target", "position", kAgainst.name},
        .after = "rollout",
        .keys = {{.field = kAgainst,
            .type = "string",
            .meaning = "logit-attribution view: a second token, written as `target` is: the view then splits "
                       "logit(`target`) − logit(`against`), the logit difference of Wang et al.'s IOI work; `\"\"` = "
                       "the target's logit alone",
            .ownedByView = true,
            .perModel = true}}};
}

} // namespace atlas::views::logitattribution
