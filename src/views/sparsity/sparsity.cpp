#include "sparsity/sparsity.h"

#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Sparsity view (sparsemax and α-entmax): its descriptor and its analysis request.
namespace atlas::views::sparsity {

namespace {

using namespace atlas::analysis;

// Every layer's heads counted for exact zeros: the whole forward pass must be traced.
AnalysisRequest request(const ViewSpec &, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    if (const std::string why = attentionSparsityProblem(*c.model, *c.trace); !why.empty()) {
        if (const std::string untraced = untracedWeightsText(c); !untraced.empty())
            return problem(untraced);
        return problem("The Sparsity view cannot count this model's heads: " + why + ".");
    }
    AnalysisRequest r = everyLayerRequest("sparse-attention", c, {"attn.probs", "attn.masked"});
    r.run = [model = c.model, trace = c.trace](const std::atomic<bool> &) {
        return timedResult<SparseAttentionAnalysis>(
            [&](SparseAttentionAnalysis &result) { result.sparsity = attentionSparsity(*model, *trace); });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "sparsity",
        .title = "Sparsity",
        .summary = "sparsemax and \u03B1-entmax: each head's \u03B1 and the share of its query\u2013key pairs given "
                   "exactly 0, layer by layer",
        .group = "Adaptive",
        .readsEveryBlocksHeads = true,
        .request = request,
        .after = "sinkhorn"};
}

} // namespace atlas::views::sparsity
