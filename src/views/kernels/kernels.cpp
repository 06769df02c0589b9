#include "kernels/kernels.h"

#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Kernels view (one head under every attention kernel): its descriptor and its analysis request.
namespace atlas::views::kernels {

namespace {

using namespace atlas::analysis;

AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    const int layer = spec.layer, head = std::max(0, spec.head);
    const HeadQkv qkv = headQkv(c, layer, head);
    if (!qkv.problem.empty())
        return problem(qkv.problem);
    const int64_t T = qkv.q.dim(1);
    if (T > KernelComparisonAnalysis::kMaxTokens)
        return problem("The comparison runs this head through every kernel densely: " + std::to_string(T) + " × "
            + std::to_string(T) + " weights per kernel, computed on the spot. That is for small inputs only: this one "
            + "has " + std::to_string(T) + " tokens, the limit is "
            + std::to_string(KernelComparisonAnalysis::kMaxTokens)
            + ". Shorten the text to compare kernels (the time plot shows how they scale).");
    return headRequest<KernelComparisonAnalysis>("kernels", qkv, layer, head, c,
        [causal = c.causal, padding = c.padding](KernelComparisonAnalysis &out, const Tensor &q, const Tensor &k,
            const Tensor &v, const std::atomic<bool> &) {
            out.entries = attention::compareKernels(q.matrix(), k.matrix(), v.matrix(), causal, padding);
        });
}

} // namespace

ViewKind kind()
{
    return {.kind = "kernels",
        .title = "Kernels",
        .summary = "one head under every efficient attention kernel",
        .group = "Efficiency",
        .needs = ViewNeeds::LayerProbs,
        .request = request,
        .analysisKeys = {"layer", "head"},
        .alsoReads = {"scale"},
        .after = "features"};
}

} // namespace atlas::views::kernels
