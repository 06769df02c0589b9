#include "earlyexit/earlyexit.h"

#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Early exit view: its descriptor and its analysis request.
namespace atlas::views::earlyexit {

namespace {

using namespace atlas::analysis;

// Each block's lens prediction and the exit rules' sweeps; the rule and its setting only choose what is drawn.
AnalysisRequest request(const ViewSpec &, const AnalysisContext &c)
{
    if (!c.model || !c.trace || !c.program)
        return problem(kNothingComputed);
    if (const std::string why = earlyExitProblem(c.model->config, *c.program, *c.trace); !why.empty())
        return problem("Early exit reads each block's prediction through the output head (the logit lens). "
            + sentenceCased(why) + ".");
    AnalysisRequest r = streamsRequest("early-exit/" + modelIdentity(*c.model), c);
    r.run
        = [model = c.model, program = c.program, trace = c.trace, input = inputOf(c)](const std::atomic<bool> &cancel) {
              return timedResult<EarlyExitAnalysis>([&](EarlyExitAnalysis &result) {
                  LogitLensOptions options;
                  options.topK = 1;
                  options.cancel = &cancel;
                  const LogitLens lens = logitLens(*model, *program, *trace, input, options);
                  if (cancel.load())
                      return;
                  result.exit = earlyExit(lens, model->config, input.tokens);
              });
          };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "early-exit",
        .title = "Early exit",
        .summary = "each token stops at the first layer sure enough of its prediction (confidence or PABEE's "
                   "patience): layers saved against accuracy",
        .group = "Research",
        .request = request,
        .after = "logit-lens",
        .keys
        = {{.field = kExitRule,
               .type = "string",
               .meaning = "early exit: the rule that stops a token, `confidence` (after the first block whose top "
                          "probability is at least `exit_threshold`) or `patience` (PABEE: once its prediction has "
                          "stayed unchanged `exit_patience` times in a row)",
               .choices = {"confidence", "patience"},
               .ownedByView = true},
            {.field = kExitThreshold,
                .type = "number, 0 < θ ≤ 1",
                .meaning = "early exit by confidence: θ, the top probability a block's prediction needs",
                .maximum = 1,
                .ownedByView = true},
            {.field = kExitPatience,
                .type = "int ≥ 1",
                .meaning = "early exit by patience: t, how many times in a row the prediction must stay unchanged "
                           "(clamped to the model's layers − 1)",
                .minimum = 1,
                .rule = ">= 1",
                .ownedByView = true}}};
}

} // namespace atlas::views::earlyexit
