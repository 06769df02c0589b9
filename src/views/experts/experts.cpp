#include "experts/experts.h"

#include "util/error.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Experts view (mixture-of-experts routing): its descriptor and its analysis request.
namespace atlas::views::experts {

namespace {

using namespace atlas::analysis;

// The spec's layer routed at the spec's capacity factor (analysis/expertrouting.h): a forward pass of the model on the
// input with the factor changed, so every layer before it routes at that factor too.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (int(c.tokenIds.size()) > ExpertsAnalysis::kMaxTokens)
        return problem("The Experts view routes up to " + std::to_string(ExpertsAnalysis::kMaxTokens)
            + " tokens; the input has " + std::to_string(c.tokenIds.size()) + ".");
    const ModelConfig &config = c.model->config;
    const int layer = std::clamp(spec.layer, 0, config.layers - 1);
    try {
        if (spec.capacityFactor > 0 || spec.expertTopK > 0)
            (void)c.model->withRouting(spec.capacityFactor, spec.expertTopK, "capacity_factor / expert_top_k");
        if (const std::string why = expertLayerProblem(config, layer); !why.empty())
            throw Error(why);
    } catch (const Error &e) {
        return problem(std::string("The Experts view shows a mixture-of-experts layer: ") + e.what() + ".");
    }
    AnalysisRequest r;
    r.key = "experts/" + modelIdentity(*c.model) + "/" + std::to_string(layer) + "/cf"
        + std::to_string(spec.capacityFactor) + "/k" + std::to_string(spec.expertTopK) + "/d"
        + std::to_string(spec.devices) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    r.run = [model = c.model, input = inputOf(c), layer, factor = spec.capacityFactor, topK = spec.expertTopK,
                devices = spec.devices](const std::atomic<bool> &cancel) {
        return timedResult<ExpertsAnalysis>([&](ExpertsAnalysis &result) {
            result.routing = expertRouting(*model, input, layer, factor, topK, devices, &cancel);
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "experts",
        .title = "Experts",
        .summary
        = "a mixture-of-experts layer's routing: each token's expert, the buffers filling to capacity, the load, "
          "the devices",
        .group = "Inside the model",
        .request = request,
        .after = "positions"};
}

} // namespace atlas::views::experts
