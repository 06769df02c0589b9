#include "norms/norms.h"

#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The LayerNorm against BatchNorm view: its descriptor and its analysis request.
namespace atlas::views::norms {

namespace {

using namespace atlas::analysis;

AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    if (c.tokens > NormsAnalysis::kMaxTokens)
        return problem("The norms view draws two maps of " + std::to_string(c.tokens)
            + " tokens by their features cell by cell; it is for inputs of up to "
            + std::to_string(NormsAnalysis::kMaxTokens) + " tokens. Shorten the text.");
    const int layer = std::clamp(spec.layer, 0, c.layers - 1);
    const auto [input, output] = firstNormTensors(c.model->config, layer);
    if (input.empty())
        return problem("The norms view compares the norms of a model with one stack of blocks; this one has an "
                       "encoder and a decoder.");
    AnalysisRequest r;
    r.key = "norms/" + modelIdentity(*c.model) + "/" + std::to_string(layer);
    r.pinned = {c.model->wte};
    for (const std::string &name : {input, output}) {
        const TraceEntry *entry = c.trace->find(name);
        if (!entry)
            return problem(notComputedText(c.program.get(), name));
        r.key += identity(entry->tensor);
        r.pinned.push_back(entry->tensor);
    }
    r.run = [model = c.model, trace = c.trace, layer](const std::atomic<bool> &) {
        return timedResult<NormsAnalysis>(
            [&](NormsAnalysis &result) { result.comparison = compareNorms(*model, *trace, layer); });
    };
    return r;
}

std::vector<std::string> recomputes(const ViewSpec &spec, const ModelConfig &config)
{
    const auto [input, output] = firstNormTensors(config, std::clamp(spec.layer, 0, config.layers - 1));
    if (input.empty())
        return {};
    return {input, output};
}

} // namespace

ViewKind kind()
{
    return {.kind = "norms",
        .title = "Norms",
        .summary = "a block's norm input normalised per token (LayerNorm) and per feature over the tokens (BatchNorm): "
                   "what each divides by, and how much a token's BatchNorm depends on the tokens after it",
        .group = "Training",
        .request = request,
        .analysisKeys = {"layer"},
        .recomputes = recomputes,
        .after = "gradients"};
}

} // namespace atlas::views::norms
