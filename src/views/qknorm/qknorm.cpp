#include "qknorm/qknorm.h"

#include "engine/attentiontrace.h"
#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The QK-norm view (Qwen3, OLMo 2): its descriptor and its analysis request.
namespace atlas::views::qknorm {

namespace {

using namespace atlas::analysis;

// Every head's query and key lengths before and after QK-norm, and its scores' range against the bounds: a pass over
// the layer's traced q, k and masked scores.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    const int layer = std::clamp(spec.layer, 0, c.layers - 1);
    if (const std::string why = qkNormEffectProblem(*c.model, layer); !why.empty())
        return problem(
            "The QK-norm view compares the lengths of q and k with the scores they make: " + sentenceCased(why) + ".");
    AnalysisRequest r;
    r.key = "qk-norm/" + modelIdentity(*c.model) + "/" + std::to_string(layer);
    r.pinned = {c.model->wte};
    for (const std::string &name : qkNormEffectInputs(c.model->config, layer)) {
        const TraceEntry *entry = c.trace->find(name);
        if (!entry && name == names::layerTensor(layer, "attn.masked")) // kept on demand: what recomputes them
            entry = c.trace->find(names::layerTensor(layer, "attn.lse"));
        if (!entry)
            return problem(notComputedText(c.program.get(), name));
        r.key += identity(entry->tensor);
        r.pinned.push_back(entry->tensor);
    }
    r.run = [model = c.model, trace = c.trace, layer, padding = c.padding](const std::atomic<bool> &) {
        return timedResult<QkNormAnalysis>(
            [&](QkNormAnalysis &result) { result.effect = qkNormEffect(*model, *trace, layer, padding); });
    };
    return r;
}

std::vector<std::string> recomputes(const ViewSpec &spec, const ModelConfig &config)
{
    const int layer = std::clamp(spec.layer, 0, config.layers - 1);
    std::vector<std::string> names = qkNormEffectInputs(config, layer);
    for (std::string &name : readoutInputs(config, layer)) // what its scores are read back from
        if (std::ranges::find(names, name) == names.end())
            names.push_back(std::move(name));
    return names;
}

} // namespace

ViewKind kind()
{
    return {.kind = "qk-norm",
        .title = "QK-norm",
        .summary = "each head's \u2016q\u2016 and \u2016k\u2016 before and after QK-norm, and the range of scores it "
                   "allows",
        .group = "Attention",
        .request = request,
        .analysisKeys = {"layer"},
        .recomputes = recomputes,
        .after = "scaling"};
}

} // namespace atlas::views::qknorm
