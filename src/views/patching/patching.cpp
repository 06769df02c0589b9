#include "patching/patching.h"

#include "engine/inputbuilder.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "util/error.h"
#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>

// The Patching view (activation patching): its descriptor and its analysis request.
namespace atlas::views::patching {

namespace {

using namespace atlas::analysis;

// Every cell of the spec's patch site, the input against its corruption; each patched forward pass is a step of the
// progress the window shows.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model || c.tokenIds.empty())
        return problem(kNothingComputed);
    if (spec.target.empty())
        return problem("Activation patching measures one token at one position: name it in the Target box (a token, "
                       "or #id), and a second one in Contrast for a logit difference.");
    if (const std::string why = corruptionMissing(spec, "Activation patching"); !why.empty())
        return problem(why);
    // Every cell is a forward pass of the input from the patched operation on, beside the clean and the corrupted
    // runs' traces: at 2000 tokens hours of work, and a bad_alloc at 8000 before this estimate.
    PatchSite site = PatchSite::Residual;
    try {
        site = patchSiteFromName(spec.get(views::patching::kPatch));
    } catch (const Error &e) {
        return problem(e.what());
    }
    const PatchingWork work
        = patchingWork(c.model->config, c.tokens, site, double(c.program ? c.program->tracedBytes() : 0));
    if (auto over = overBudgetRequest(c, work.what, work.flops, work.bytes))
        return *over;
    AnalysisRequest r;
    r.key = "patching/" + modelIdentity(*c.model) + "/" + inputKey(c);
    r.pinned = {c.model->wte};
    r.progress = std::make_shared<AnalysisProgress>();
    r.run = [model = c.model, input = inputOf(c), spec, progress = r.progress](const std::atomic<bool> &cancel) {
        return timedResult<PatchingAnalysis>([&](PatchingAnalysis &result) {
            const std::unique_ptr<Tokenizer> tokenizer = tokenizerForModel(*model);
            const Corruption corruption = corruptionOf(spec, *tokenizer, input.tokens.size());
            PatchingOptions options;
            options.site = patchSiteFromName(spec.get(views::patching::kPatch));
            result.target = targetId("target", spec.target, *tokenizer, model->config.vocab);
            result.contrast
                = targetId("contrast", spec.get(views::patching::kContrast), *tokenizer, model->config.vocab);
            options.metric = {spec.position, result.target, result.contrast};
            options.cancel = &cancel;
            options.budget = WorkBudget::unbounded(); // the request checked the context's
            options.progress = [progress](int done, int total) {
                progress->total = total;
                progress->done = done;
                return true;
            };
            result.result = activationPatching(model, input, corruption, options);
        });
    };
    return r;
}

} // namespace

ViewKind kind()
{
    return {.kind = "patching",
        .title = "Patching",
        .summary = "activation patching: which residual streams, heads or feed-forward layers restore the clean "
                   "output in a corrupted run",
        .group = "Circuits",
        .request = request,
        .analysisKeys
        = {"position", "seed", "target", kPatch.name, kCorruptedText.name, kNoisePositions.name, kContrast.name},
        .after = "circuit",
        .keys = {{.field = kPatch,
            .type = "string",
            .meaning = "patching view: what is patched, one cell each: `residual` (the residual stream entering each "
                       "block at each position), `heads` (each head's output, its context C_h at every position) or "
                       "`mlp` (each layer's feed-forward output at every position)",
            .choices = {"residual", "heads", "mlp"},
            .ownedByView = true}}};
}

} // namespace atlas::views::patching
