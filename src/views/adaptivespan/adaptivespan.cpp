#include "adaptivespan/adaptivespan.h"

#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Span view (adaptive attention span): its descriptor and its analysis request.
namespace atlas::views::adaptivespan {

namespace {

using namespace atlas::analysis;

// Every head's learned span, and how far back its weight lies on the input: the whole forward pass must be traced.
AnalysisRequest request(const ViewSpec &, const AnalysisContext &c)
{
    if (!c.model || !c.trace || c.tokens < 1)
        return problem(kNothingComputed);
    if (!c.model->config.adaptiveSpan())
        return problem("The Adaptive span view shows heads that learned how far back to look: "
            + adaptiveSpanProblem(*c.model, *c.trace) + ". Open copy-span (Model menu), trained with adaptive span.");
    if (const std::string untraced = untracedWeightsText(c); !untraced.empty())
        return problem(untraced);
    AnalysisRequest r = everyLayerRequest("adaptive-span", c, {"attn.probs"});
    r.run = [model = c.model, trace = c.trace](const std::atomic<bool> &) {
        return timedResult<AdaptiveSpanAnalysis>(
            [&](AdaptiveSpanAnalysis &result) { result.spans = adaptiveSpans(*model, *trace); });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "adaptive-span",
        .title = "Span",
        .summary = "each head's learned attention span (log scale), and one head's attention under its soft mask",
        .group = "Adaptive",
        .request = request,
        .after = "sparsity"};
}

} // namespace atlas::views::adaptivespan
