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
        if (spec.get(views::experts::kCapacityFactor) > 0 || spec.get(views::experts::kExpertTopK) > 0)
            (void)c.model->withRouting(spec.get(views::experts::kCapacityFactor), spec.get(views::experts::kExpertTopK),
                "capacity_factor / expert_top_k");
        if (const std::string why = expertLayerProblem(config, layer); !why.empty())
            throw Error(why);
    } catch (const Error &e) {
        return problem(std::string("The Experts view shows a mixture-of-experts layer: ") + e.what() + ".");
    }
    AnalysisRequest r;
    r.key = "experts/" + modelIdentity(*c.model) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    r.run = [model = c.model, input = inputOf(c), layer, factor = spec.get(views::experts::kCapacityFactor),
                topK = spec.get(views::experts::kExpertTopK),
                devices = spec.get(views::experts::kDevices)](const std::atomic<bool> &cancel) {
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
        .group = "Model",
        .request = request,
        .analysisKeys = {"layer", kCapacityFactor.name, kExpertTopK.name, kDevices.name},
        .after = "positions",
        .keys = {{.field = kCapacityFactor,
                     .type = "number ≥ 0",
                     .meaning
                     = "experts view: route with this capacity factor (each expert takes ⌈factor · T / E⌉ tokens); 0 = "
                       "the model's own (`atlas_capacity_factor`)",
                     .maximum = 1024,
                     .zeroAllowed = true,
                     .ownedByView = true,
                     .perModel = true},
            {.field = kExpertTopK,
                .type = "int ≥ 0",
                .meaning = "experts view: send each token to this many experts (at most E); 0 = the model's own "
                           "(`atlas_expert_top_k`)",
                .rule = ">= 1, or 0 for the model's own",
                .ownedByView = true,
                .perModel = true},
            {.field = kDevices,
                .type = "int ≥ 1",
                .meaning = "experts view: the devices the experts are spread over (clamped to E)",
                .minimum = 1,
                .rule = ">= 1",
                .ownedByView = true}}};
}

} // namespace atlas::views::experts
