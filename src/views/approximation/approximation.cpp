#include "approximation/approximation.h"

#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Approximation view (Linformer and Performer against softmax): its descriptor and its analysis request.
namespace atlas::views::approximation {

namespace {

using namespace atlas::analysis;

AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    const int layer = spec.layer, head = std::max(0, spec.head);
    const HeadQkv qkv = headQkv(c, layer, head);
    if (!qkv.problem.empty())
        return problem(qkv.problem);
    attention::ApproximationSweepOptions options;
    options.kernel = spec.get(views::approximation::kApproximation);
    options.seeds = ApproximationAnalysis::kSeeds;
    // A kernel that cannot be causal (Linformer) is compared bidirectionally, and says so.
    options.causal = c.causal && attention::attentionKernel(spec.get(views::approximation::kApproximation)).causal;
    options.padding = c.padding;
    return headRequest<ApproximationAnalysis>("approximation", qkv, layer, head, c,
        [options](ApproximationAnalysis &out, const Tensor &q, const Tensor &k, const Tensor &v,
            const std::atomic<bool> &cancel) {
            attention::ApproximationSweepOptions o = options;
            o.cancel = &cancel;
            out.sweep = attention::approximation_sweep(q.matrix(), k.matrix(), v.matrix(), o);
        });
}

} // namespace

ViewKind kind()
{
    return {.kind = "approximation",
        .title = "Low-rank",
        .summary = "Linformer and Performer against exact softmax",
        .group = "Efficiency",
        .needs = ViewNeeds::LayerProbs,
        .request = request,
        .analysisKeys = {"layer", "head", kApproximation.name},
        .alsoReads = {"scale"},
        .after = "lsh",
        .keys = {{.field = kApproximation,
                     .type = "string",
                     .meaning = "approximation view: `linformer` or `performer`",
                     .choices = {"linformer", "performer"},
                     .ownedByView = true},
            {.field = kApproximationValue,
                .type = "int ≥ 0",
                .meaning = "approximation view: the k (Linformer) or number of features (Performer) drawn, the nearest "
                           "swept one; 0 = the middle of the sweep",
                .rule = ">= 1, or 0 for the middle of the sweep",
                .ownedByView = true}}};
}

} // namespace atlas::views::approximation
