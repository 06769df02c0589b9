#include "fourier/fourier.h"

#include "engine/attentiontrace.h"
#include "util/error.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Fourier mixing view (FNet): its descriptor and its analysis request.
namespace atlas::views::fourier {

namespace {

using namespace atlas::analysis;

AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    if (c.tokens > FourierMixingAnalysis::kMaxTokens)
        return problem("The Fourier mixing view draws three " + std::to_string(c.tokens) + " \u00D7 "
            + std::to_string(c.tokens) + " maps cell by cell; it is for inputs of up to "
            + std::to_string(FourierMixingAnalysis::kMaxTokens) + " tokens. Shorten the text.");
    const int layer = std::clamp(spec.layer, 0, c.layers - 1), head = std::max(0, spec.head);
    std::string why;
    const TraceEntry *entry = tracedAttentionInput(c, layer, why);
    if (!entry)
        return problem(why);
    AnalysisRequest r;
    r.key = "fourier/" + modelIdentity(*c.model) + "/" + std::to_string(layer) + "/" + std::to_string(head)
        + identity(entry->tensor) + paddingKey(c.padding);
    r.pinned = {c.model->wte, entry->tensor};
    r.run = [model = c.model, trace = c.trace, layer, head, padding = c.padding](const std::atomic<bool> &) {
        return timedResult<FourierMixingAnalysis>([&](FourierMixingAnalysis &result) {
            result.mixing = fourierMixing(*model, *trace, layer, head, padding);
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
    return {.kind = "fourier",
        .title = "Fourier mixing",
        .summary = "FNet's fixed Fourier mixing of a block's input beside the block's learned attention, or an FNet "
                   "model's own mixing",
        .group = "Efficiency",
        .needs = ViewNeeds::LayerProbs,
        .drawsFourierLayers = true,
        .request = request,
        .analysisKeys = {"layer", "head"},
        .recomputes = recomputes,
        .after = "approximation"};
}

} // namespace atlas::views::fourier
