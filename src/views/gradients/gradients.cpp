#include "gradients/gradients.h"

#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "util/error.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

// The Gradients by depth view (post-LN against pre-LN): its descriptor and its analysis request.
namespace atlas::views::gradients {

namespace {

using namespace atlas::analysis;

// A backward pass of the model as trained and one of its initialised twin on the input; then the same for
// baseline_model, on the spec's text in its own tokens.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokens < 1)
        return problem(kNothingComputed);
    if (const std::string why = gradientDepthProblem(*c.model); !why.empty())
        return problem("Gradients by depth follow one stack of blocks: " + why + ".");
    AnalysisRequest r;
    r.key = "gradients/" + modelIdentity(*c.model) + "/" + inputKey(c);
    r.pinned.push_back(c.model->wte);
    r.progress = std::make_shared<AnalysisProgress>();
    const FreshWeights fresh {
        spec.get(kInit) == "xavier" ? WeightInit::Xavier : WeightInit::Family, spec.get(kFreshBlocks)};
    r.run = [model = c.model, input = inputOf(c), spec, fresh, progress = r.progress](const std::atomic<bool> &cancel) {
        return timedResult<GradientsAnalysis>([&](GradientsAnalysis &result) {
            progress->total = spec.baselineModel.empty() ? 2 : 4;
            const auto measure = [&](std::shared_ptr<const Model> m, const Input &in) {
                if (cancel.load())
                    return;
                result.runs.push_back(gradientDepth(m, in));
                ++progress->done;
                if (cancel.load())
                    return;
                result.runs.push_back(gradientDepth(m, in, fresh));
                ++progress->done;
            };
            measure(model, input);
            if (spec.baselineModel.empty() || cancel.load())
                return;
            const std::shared_ptr<const Model> baseline = loadModel(spec.baselineModel);
            if (const std::string why = gradientDepthProblem(*baseline); !why.empty())
                throw Error("baseline_model " + spec.baselineModel + ": " + why);
            measure(baseline, specInput(spec, *baseline, *tokenizerForModel(*baseline), "baseline_model"));
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "gradients",
        .title = "Gradients by depth",
        .summary = "each block's gradient norm, attention and feed-forward, for the model as trained and at "
                   "initialisation: post-LN against pre-LN",
        .group = "Training",
        .request = request,
        // baseline_model's input is the spec's text in its own tokens (specInput), which reads the input's keys
        .analysisKeys = {"baseline_model", "text", "tokens", "padding", "decoder_text", "decoder_tokens", kInit.name,
            kFreshBlocks.name},
        .after = "fills",
        .keys
        = {{.field = kInit,
               .type = "string",
               .meaning = "gradients view: how the fresh weights (the dashed curves) are drawn: `family` as every "
                          "family here draws them (normal, σ = 0.02), `xavier` every weight matrix Xavier-uniform "
                          "(Xiong et al.'s setting)",
               .choices = {"family", "xavier"},
               .ownedByView = true},
            {.field = kFreshBlocks,
                .type = "int ≥ 0",
                .meaning = "gradients view: the fresh twin's number of blocks, each as wide as the model's (at most "
                           "48); 0 = the model's own",
                .rule = ">= 0 (0 for the model's own)",
                .check = [](const ViewSpec &spec) -> std::string {
                    return spec.get(kFreshBlocks) > kMaxFreshBlocks
                        ? "at most " + std::to_string(kMaxFreshBlocks) + " fresh blocks"
                        : "";
                },
                .ownedByView = true}}};
}

} // namespace atlas::views::gradients
