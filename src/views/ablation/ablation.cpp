#include "ablation/ablation.h"

#include "util/error.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

// The Ablation view (heads switched off against the whole model): its descriptor and its analysis request.
namespace atlas::views::ablation {

namespace {

using namespace atlas::analysis;

// The importance table takes L·H + 1 scorings of the task; a head toggled on and off must not pay for it again.
ResultCache<HeadImportance> &importanceCache()
{
    static ResultCache<HeadImportance> cache;
    return cache;
}

// The input rerun with the spec's heads switched off (ablate_heads, ablation), the task scored both ways, and the
// importance of every head (computed once per model and mode, then reused while the user switches heads).
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    const int T = int(c.tokenIds.size());
    if (T > HeadAblationAnalysis::kMaxTokens)
        return problem("The Head ablation view reruns up to " + std::to_string(HeadAblationAnalysis::kMaxTokens)
            + " tokens; the input has " + std::to_string(T) + ".");
    const int position = spec.position < 0 ? T - 1 : spec.position;
    if (position >= T)
        return problem("position " + std::to_string(spec.position) + " is past the input's last token ("
            + std::to_string(T - 1) + ").");
    std::vector<HeadRef> heads;
    try {
        heads = parseHeadList(
            spec.get(views::ablation::kAblateHeads), c.model->config.layers, c.model->config.heads, "ablate_heads");
    } catch (const Error &e) {
        return problem(e.what());
    }
    const HeadAblation::Mode mode = parseAblationMode(spec.get(views::ablation::kAblation), "ablation");
    AnalysisRequest r;
    r.key = "ablation/" + modelIdentity(*c.model) + "/" + inputKey(c) + (c.checkOnly ? "/check" : "");
    r.pinned = {c.model->wte};
    r.progress = std::make_shared<AnalysisProgress>();
    r.run = [model = c.model, input = inputOf(c), heads, mode, position, text = spec.get(views::ablation::kAblation),
                examples = c.heldOutExamples(HeadAblationAnalysis::kExamples),
                progress = r.progress](const std::atomic<bool> &cancel) -> std::shared_ptr<const ViewAnalysis> {
        return timedResult<HeadAblationAnalysis>([&](HeadAblationAnalysis &result) {
            result.model = model->name;
            result.heads = heads;
            result.mode = text;
            result.position = position;
            if (!model->config.task.empty()) {
                const std::string importanceKey
                    = weightsFingerprint(*model) + "/" + text + "/" + std::to_string(examples);
                result.importance
                    = importanceCache().findOrMake(importanceKey, [&]() -> std::shared_ptr<const HeadImportance> {
                          auto importance = std::make_shared<const HeadImportance>(
                              headImportance(model, mode, examples, [&](int done, int total) {
                                  progress->total = total; // the scorings of the task, one per head and the whole
                                  progress->done = done;
                                  return !cancel.load();
                              }));
                          return importance->without.empty() ? nullptr : importance;
                      });
                if (!result.importance)
                    return; // cancelled: the session drops the result
            }
            const HeadAblation ablation
                = makeHeadAblation(model, heads, mode, ablationReferences(*model, input.tokens));
            // The whole model's scores are the importance table's baseline (same examples): not measured again.
            result.comparison = compareAblation(
                model, input, position, ablation, examples, result.importance ? &result.importance->baseline : nullptr);
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "ablation",
        .title = "Ablation",
        .summary = "switch heads off: the next token, the task's loss and accuracy, and each head's importance",
        .group = "Attention",
        .readsEveryBlocksHeads = true,
        .request = request,
        .analysisKeys = {"position", kAblateHeads.name, kAblation.name},
        .after = "neuron",
        .keys
        = {{.field = kAblateHeads,
               .type = "string",
               .meaning
               = "ablation view: the heads switched off as `layer.head`, comma-separated (`\"0.1,1.3\"`, as `dump "
                 "--ablate-heads`); a head the model lacks is named in the view",
               .check =
                   [](const ViewSpec &s) {
                       try { // the form here; whether each head exists, against the model that runs
                           parseHeadList(s.get(kAblateHeads), 1 << 20, 1 << 20, "heads");
                       } catch (const Error &e) {
                           return std::string(e.what()).substr(7); // after "heads: "
                       }
                       return std::string();
                   },
               .ownedByView = true,
               .perModel = true},
            {.field = kAblation,
                .type = "string",
                .meaning
                = "ablation view: `zero` (a head's context C_h is replaced by 0 in the merge, Michel et al.'s head "
                  "pruning) or `mean` (by its mean over held-out examples of the model's task, or over the input "
                  "for a model without one)",
                .choices = {"zero", "mean"},
                .ownedByView = true}}};
}

} // namespace atlas::views::ablation
