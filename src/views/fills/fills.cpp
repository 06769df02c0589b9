#include "fills/fills.h"

#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Fills view (a masked LM's first choices): its descriptor and its analysis request.
namespace atlas::views::fills {

namespace {

using namespace atlas::analysis;

// The masked LM's fills at each hidden position: the model rerun on the input, corrupted from the spec's seed when its
// objective is "mlm".
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (const std::string why = maskedFillsProblem(c.model->config, c.model->name); !why.empty())
        return problem("The Masked fills view shows what a masked language model names: " + why + ".");
    if (!spec.objective.empty() && spec.objective != "mlm")
        return problem("The Masked fills view fills the masked LM's corruption or the [MASK]s you type; the "
            + spec.objective + " objective hides nothing for it to fill: choose the masked LM in the Objectives view.");
    const bool corrupted = spec.objective == "mlm";
    const int k = std::min(spec.topK, FillsAnalysis::kMaxFills);
    AnalysisRequest r;
    r.key = "fills/" + modelIdentity(*c.model) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    r.run = [model = c.model, input = inputOf(c), corrupted, seed = spec.seed, k](const std::atomic<bool> &cancel) {
        return timedResult<FillsAnalysis>([&](FillsAnalysis &result) {
            result.corrupted = corrupted;
            result.seed = seed;
            result.fills = maskedFills(model, input.tokens, input.padding,
                corrupted ? std::optional<uint64_t>(uint64_t(seed)) : std::nullopt, k, &cancel);
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "fills",
        .title = "Masked fills",
        .summary = "what a masked language model names at each hidden position: its first choices and the original",
        .group = "Training",
        .request = request,
        .analysisKeys = {"top_k", "objective", "seed"},
        .checkInput = fillsInputProblem,
        .after = "objective"};
}

} // namespace atlas::views::fills
