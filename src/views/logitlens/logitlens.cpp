#include "logitlens/logitlens.h"

#include "model/modeltokenizer.h"
#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Logit lens view: its descriptor and its analysis request.
namespace atlas::views::logitlens {

namespace {

using namespace atlas::analysis;

// Every stream traced so far read through the output head; its key names the streams' tensors, so stepping within a
// block or switching views reruns nothing.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || !c.trace || !c.program)
        return problem(kNothingComputed);
    if (const std::string why = logitLensProblem(c.model->config, *c.program, *c.trace); !why.empty())
        return problem("The logit lens reads the residual stream through the output head. " + sentenceCased(why) + ".");
    AnalysisRequest r = streamsRequest("logit-lens/" + modelIdentity(*c.model), c);
    r.run = [model = c.model, program = c.program, trace = c.trace, input = inputOf(c), target = spec.target](
                const std::atomic<bool> &cancel) {
        return timedResult<LogitLensAnalysis>([&](LogitLensAnalysis &result) {
            result.target = target;
            LogitLensOptions options;
            options.topK = LogitLensAnalysis::kTopK;
            options.target = targetId("target", target, *tokenizerForModel(*model), model->config.vocab);
            options.cancel = &cancel;
            result.lens = logitLens(*model, *program, *trace, input, options);
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "logit-lens",
        .title = "Logit lens",
        .summary = "the residual stream after each block read through the output head: what the model would "
                   "predict if it stopped there",
        .group = "Research",
        .showsEncoderDecoder = true,
        .request = request,
        .analysisKeys = {"target"},
        .alsoReads = {"scale"},
        .after = "position-loss"};
}

} // namespace atlas::views::logitlens
