#include "inversionerror/inversionerror.h"

#include "memory/memorysweep.h"
#include "view/analysishelpers.h"
#include "view/memoryrequests.h"
#include "view/viewkinds.h"

// The Inversion error view (how exactly reversible blocks rebuild their inputs): its descriptor and its analysis
// request.
namespace atlas::views::inversionerror {

namespace {

using namespace atlas::analysis;

// The rebuild error of every block, in each precision of the streams (memory/inversionerror.h): of the model's own
// weights at depth 0 (it must be reversible), else of a random reversible model of its shape at that depth.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (std::string p = trainingInputProblem(c, InversionErrorAnalysis::kMaxTokens, "The inversion error runs");
        !p.empty())
        return problem(p);
    if (spec.depth == 0 && !c.model->config.reversible)
        return problem("depth 0 measures the model's own weights, and this model has standard blocks: choose a "
                       "depth for a random reversible model of its shape, or open a reversible model (reverse-rev).");
    if (const std::string why = reversibleProblem(c.model->config); spec.depth > 0 && !why.empty())
        return problem("A reversible model of this model's shape cannot be built: " + why + ".");
    AnalysisRequest r;
    r.key = "inversion-error/" + modelIdentity(*c.model) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    r.run = [model = c.model, input = inputOf(c), depth = spec.depth](const std::atomic<bool> &cancel) {
        return timedResult<InversionErrorAnalysis>([&](InversionErrorAnalysis &result) {
            const Model measured = depth > 0 ? modelAtDepth(model->config, depth, true) : *model;
            result.tokens = int(input.tokens.size());
            result.depth = measured.config.layers;
            result.ownWeights = depth == 0;
            const std::vector<int> targets = nextTokenSequence(input).targets;
            for (StreamPrecision p : {StreamPrecision::Double, StreamPrecision::Float32, StreamPrecision::Float16,
                     StreamPrecision::BFloat16}) {
                if (cancel)
                    break;
                result.errors.push_back(measureInversionError(measured, input, targets, p));
            }
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "inversion-error",
        .title = "Inversion error",
        .summary = "how exactly reversible blocks rebuild their inputs, per block, in float64, float32, float16 "
                   "and bfloat16",
        .group = "Memory",
        .request = request,
        .analysisKeys = {"depth"},
        .after = "memory-tradeoff"};
}

} // namespace atlas::views::inversionerror
