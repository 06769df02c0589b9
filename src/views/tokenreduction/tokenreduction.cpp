#include "tokenreduction/tokenreduction.h"

#include "model/builtinmodels.h"
#include "util/error.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Token reduction view (PoWER-BERT): its descriptor and its analysis request.
namespace atlas::views::tokenreduction {

namespace {

using namespace atlas::analysis;

// The input run with the spec's schedule, and the held-out sweep of the spec's model and of baseline_model, each
// sweep computed once per model's weights.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (const std::string why = tokenReductionProblem(*c.model); !why.empty())
        return problem("PoWER-BERT eliminates the tokens an encoder attends to least: " + why
            + ". Open austen-mlm or austen-mlm-power.");
    std::vector<float> keep;
    TokenRetention::Rank rank {};
    try {
        keep = parseRetentionSchedule(spec.get(views::tokenreduction::kRetention), c.model->config.layers, "retention");
        rank = parseRanking(spec.get(views::tokenreduction::kRanking), "ranking");
    } catch (const Error &e) {
        return problem(e.what());
    }
    AnalysisRequest r;
    const int examples = c.heldOutExamples(TokenReductionAnalysis::kExamples);
    r.key = "tokens/" + modelIdentity(*c.model) + "/" + inputKey(c) + "/" + std::to_string(examples);
    r.pinned.push_back(c.model->wte);
    r.run = [model = c.model, tokens = c.tokenIds, keep, rank, other = spec.baselineModel, examples](
                const std::atomic<bool> &cancel) {
        return timedResult<TokenReductionAnalysis>([&](TokenReductionAnalysis &result) {
            static ResultCache<ReductionSweep> cache;
            result.survival = tokenSurvival(model, tokens, keep, rank);
            std::vector<std::shared_ptr<const Model>> models = {model};
            if (!other.empty())
                models.push_back(loadModel(other));
            for (const std::shared_ptr<const Model> &m : models) {
                if (m->config.task.empty()) // a real checkpoint: its own input only
                    continue;
                const auto sweep = cache.findOrMake(weightsFingerprint(*m) + "/" + std::to_string(examples),
                    [&]() -> std::shared_ptr<const ReductionSweep> {
                        auto made = std::make_shared<ReductionSweep>(tokenReductionSweep(m, examples, &cancel));
                        return made->points.empty() ? nullptr : made;
                    });
                if (!sweep)
                    return; // cancelled: the session drops the result
                result.sweeps.push_back(sweep);
            }
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "token-reduction",
        .title = "PoWER-BERT",
        .summary = "PoWER-BERT: after each layer only the tokens that receive the most attention go on; which "
                   "survive, and a masked LM's accuracy against the work left",
        .group = "Adaptive",
        .readsEveryBlocksHeads = true,
        .request = request,
        .analysisKeys = {"baseline_model", kRetention.name, kRanking.name},
        .after = "adaptive-span",
        .keys = {{.field = kRetention,
                     .type = "string",
                     .meaning
                     = "token reduction: the share of the input's tokens kept after each layer (PoWER-BERT's retention "
                       "schedule), one rate r (r, r², r³ … of them) or one share per layer but the last, "
                       "non-increasing (`\"0.9,0.6,0.4\"`)",
                     .check =
                         [](const ViewSpec &s) {
                             try { // the form here; the count of shares against the model that runs
                                 if (s.get(kRetention).find(',') == std::string::npos)
                                     parseRetentionSchedule(s.get(kRetention), 2, "retention");
                             } catch (const Error &e) {
                                 return std::string(e.what()).substr(11); // after "retention: "
                             }
                             return std::string();
                         },
                     .ownedByView = true},
            {.field = kRanking,
                .type = "string",
                .meaning = "token reduction: how the tokens that go on are chosen, `significance` (PoWER-BERT: the "
                           "attention each receives from every query), `random` (a control) or `targets` (not "
                           "PoWER-BERT: the attention the [MASK] positions pay)",
                .choices = {"significance", "random", "targets"},
                .ownedByView = true}}};
}

} // namespace atlas::views::tokenreduction
