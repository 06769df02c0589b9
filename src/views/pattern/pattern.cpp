#include "pattern/pattern.h"

#include "attention/patternparams.h"
#include "util/error.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Pattern view (the editor of a fixed sparse pattern): its descriptor and its analysis request.
namespace atlas::views::pattern {

namespace {

using namespace atlas::analysis;

AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (c.tokens < 1)
        return problem("No input yet: type some text in the Input box.");
    attention::AttentionKernelSpec kernel;
    const bool suggested = !attention::hasFixedPattern(spec.attention);
    // A layer with a sliding window of its own (Mistral, Gemma's local layers) is suggested that window.
    const int ownWindow = suggested && c.model && c.model->config.windowed(spec.layer) && c.model->config.causal
        ? c.model->config.slidingWindow
        : 0;
    try {
        kernel = !suggested ? attention::parseAttentionKernelSpec(spec.attention, spec.attentionParams)
            : ownWindow > 0 ? attention::slidingWindowPattern(ownWindow)
                            : attention::suggestedPatternSpec("longformer", c.tokens);
    } catch (const Error &e) {
        return problem(e.what());
    }
    AnalysisRequest r;
    r.key = "pattern/" + attention::describeAttentionKernel(kernel) + "/" + std::to_string(c.tokens)
        + (c.causal ? "/causal/" : "/") + paddingKey(c.padding) + "/own" + std::to_string(ownWindow);
    r.run = [kernel, suggested, ownWindow, T = c.tokens, causal = c.causal, padding = c.padding](
                const std::atomic<bool> &) {
        const auto start = Clock::now();
        auto result = std::make_shared<PatternAnalysis>();
        result->spec = kernel;
        result->suggested = suggested;
        result->ownWindow = ownWindow;
        const int cells = T <= PatternAnalysis::kExactCells ? T : PatternAnalysis::kGridCells;
        result->summary = attention::attentionPattern(kernel, T, causal, padding, cells);
        result->formula = attention::patternFormula(kernel, causal);
        result->milliseconds = millisecondsSince(start);
        return std::shared_ptr<const ViewAnalysis>(result);
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "pattern",
        .title = "Pattern",
        .summary = "the editor of a fixed sparse pattern",
        .group = "Efficiency",
        .request = request,
        .analysisKeys = {"layer", "attention", "attention_params"},
        .after = "fourier"};
}

} // namespace atlas::views::pattern
