#include "scaling/scaling.h"

#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// Why attention divides by √d: the view's descriptor and its analysis request.
namespace atlas::views::scaling {

namespace {

using namespace atlas::analysis;

// Var(q·k) and Var(q·k/√d) of random vectors at d = 1, 2, 4 … 1024 and the head's own d, and the head's query row
// with and without the division.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    const int layer = spec.layer, head = std::max(0, spec.head);
    const HeadQkv qkv = headQkv(c, layer, head, SlidingWindows::Shown); // its caption says the window is not applied
    if (!qkv.problem.empty())
        return problem(qkv.problem);
    const int T = int(qkv.q.dim(1));
    if (spec.query >= T)
        return problem(
            "Query " + std::to_string(spec.query) + " is outside the input (" + countOf(size_t(T), "token") + ").");
    return headRequest<ScalingAnalysis>("scaling", qkv, layer, head, c,
        [causal = c.causal, padding = c.padding, query = spec.query](
            ScalingAnalysis &out, const Tensor &q, const Tensor &k, const Tensor &, const std::atomic<bool> &) {
            std::vector<int> dims;
            for (int d = 1; d <= 1024; d *= 2)
                dims.push_back(d);
            const int own = int(q.dim(1));
            if (std::find(dims.begin(), dims.end(), own) == dims.end())
                dims.insert(std::upper_bound(dims.begin(), dims.end(), own), own);
            out.random = attention::randomDotProductVariance(dims, ScalingAnalysis::kSamples);
            out.measured = attention::headScaling(q.matrix(), k.matrix(), causal, padding, query);
        });
}

} // namespace

ViewKind kind()
{
    return {.kind = "scaling",
        .title = "Why \u221Ad",
        .summary = "the variance of q\u00B7k against d, and softmax with and without 1/\u221Ad",
        .group = "Attention",
        .request = request,
        .analysisKeys = {"layer", "head", "query"},
        .after = "mask"};
}

} // namespace atlas::views::scaling
