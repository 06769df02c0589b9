#include "recurrence/recurrence.h"

#include "engine/attentiontrace.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The RNN vs attention view: its descriptor and its analysis request.
namespace atlas::views::recurrence {

namespace {

using namespace atlas::analysis;

AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    if (c.tokens > RecurrenceAnalysis::kMaxTokens)
        return problem("The RNN vs attention view runs its RNN token by token and follows it back with "
            + std::to_string(kMaxRnnWidth) + " \u00D7 " + std::to_string(kMaxRnnWidth)
            + " products; it is for inputs of up to " + std::to_string(RecurrenceAnalysis::kMaxTokens)
            + " tokens. Shorten the text.");
    if (spec.query >= c.tokens)
        return problem(
            "query " + std::to_string(spec.query) + " is past the input's " + std::to_string(c.tokens) + " tokens");
    const int layer = std::clamp(spec.layer, 0, c.layers - 1), head = std::max(0, spec.head);
    std::string why;
    const TraceEntry *entry = tracedAttentionInput(c, layer, why);
    if (!entry)
        return problem(why);
    const double radius = spec.get(kRnnRadius);
    AnalysisRequest r;
    r.key = "recurrence/" + modelIdentity(*c.model) + "/" + std::to_string(layer) + "/" + std::to_string(head)
        + identity(entry->tensor) + paddingKey(c.padding);
    r.pinned = {c.model->wte, entry->tensor};
    r.progress = std::make_shared<AnalysisProgress>();
    r.run = [model = c.model, trace = c.trace, layer, head, query = spec.query, radius, padding = c.padding,
                progress = r.progress](const std::atomic<bool> &cancel) {
        return timedResult<RecurrenceAnalysis>([&](RecurrenceAnalysis &result) {
            result.comparison
                = compareRecurrence(*model, *trace, layer, head, query, radius, padding, &cancel, progress.get());
        });
    };
    return r;
}

std::vector<std::string> recomputes(const ViewSpec &spec, const ModelConfig &config)
{
    return attentionInputAndReadout(config, std::clamp(spec.layer, 0, config.layers - 1));
}

} // namespace

ViewKind kind()
{
    return {.kind = "recurrence",
        .title = "RNN vs attention",
        .summary = "an RNN on the same vectors as a block's attention: the steps between tokens, the steps before "
                   "each state, and how far each reaches",
        .group = "Training",
        .needs = ViewNeeds::LayerProbs,
        .request = request,
        .analysisKeys = {"layer", "head", "query", kRnnRadius.name},
        .recomputes = recomputes,
        .after = "norms",
        .keys = {{.field = kRnnRadius,
            .type = "number, 0 < \u03C1 \u2264 4",
            .meaning = "RNN vs attention: \u03C1 = \u2016W\u2016\u2082, the spectral norm of the RNN's recurrent "
                       "matrix (\u03C1 times a random orthogonal one): below 1 a distant token's reach falls as "
                       "\u03C1^distance",
            .maximum = kMaxRnnRadius,
            .ownedByView = true}}};
}

} // namespace atlas::views::recurrence
