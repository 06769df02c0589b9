#include "needle/needle.h"

#include "model/modeltokenizer.h"
#include "train/corpus.h"
#include "util/text.h"
#include "view/analysishelpers.h"
#include "view/viewkinds.h"

#include <algorithm>
#include <limits>

// The Needle in a haystack view: its descriptor and its analysis request.
namespace atlas::views::needle {

namespace {

using namespace atlas::analysis;

// One traced forward per depth, on the model the spec opened: its own runs, not the session's.
AnalysisRequest request(const ViewSpec &spec, const AnalysisContext &c)
{
    if (!c.model)
        return problem(kNothingComputed);
    if (const std::string why = needleProblem(*c.model); !why.empty())
        return problem("A needle in a haystack asks a model for the next token after a long context: " + why + ".");
    const NeedleTest test = needleTest(spec, c.model->config.context);
    if (const std::string why = contextTooLong(*c.model, test.tokens); !why.empty())
        return problem(sentenceCased(why) + ": set the Context to at most " + std::to_string(c.model->config.context)
            + " tokens.");
    if (test.lengths < 1 || test.lengths > kMaxNeedleLengths)
        return problem("The grid takes 1 to " + std::to_string(kMaxNeedleLengths) + " context lengths, not "
            + std::to_string(test.lengths) + ".");
    double flops = 0;
    for (int length : needleLengths(test))
        flops += double(test.depths) * Model::forwardFlopsOf(c.model->config, length);
    const std::string passes = std::to_string(test.depths * test.lengths) + " forward passes of "
        + (test.lengths > 1 ? "up to " : "") + countOf(size_t(test.tokens), "token");
    if (auto over = overBudgetRequest(c, passes, flops, 0))
        return *over;
    AnalysisRequest r;
    r.key = "needle/" + modelIdentity(*c.model);
    r.pinned.push_back(c.model->wte);
    r.progress = std::make_shared<AnalysisProgress>();
    const size_t budget
        = c.budget.bytes > 0 ? size_t(c.budget.bytes) : std::numeric_limits<size_t>::max(); // 0: no bound
    r.run = [model = c.model, test, budget, progress = r.progress, haystack = spec.get(kHaystack)](
                const std::atomic<bool> &cancel) {
        return timedResult<NeedleAnalysis>([&](NeedleAnalysis &result) {
            result.haystack = haystack;
            result.runs = needleGrid(model, *tokenizerForModel(*model), test, budget, progress.get(), &cancel);
        });
    };
    return r;
}

} // namespace

NeedleTest needleTest(const ViewSpec &spec, int context)
{
    NeedleTest test;
    test.haystack = spec.get(kHaystack) == "input" ? spec.text : corpusHeldOut();
    test.needle = spec.get(kNeedle);
    test.question = spec.get(kNeedleQuestion);
    test.answer = spec.get(kNeedleAnswer);
    test.tokens
        = spec.own.count(kNeedleTokens.name) ? spec.get(kNeedleTokens) : std::min(kNeedleTokens.fallback, context);
    test.depths = spec.get(kNeedleDepths);
    test.lengths = spec.get(kNeedleLengths);
    return test;
}

ViewKind kind()
{
    return {.kind = "needle",
        .title = "Needle",
        .summary = "a sentence put at every depth of a long document, then a question about it: the answer's "
                   "probability by depth, and how much each layer's attention finds the needle",
        .group = "Research",
        .request = request,
        .analysisKeys = {"needle_tokens", "needle_depths", "needle_lengths", "haystack", "needle", "needle_question",
            "needle_answer", "text"},
        .after = "lost-in-the-middle",
        .keys
        = {{.field = kNeedleTokens,
               .type = "int ≥ 16",
               .meaning
               = "needle in a haystack: the context's length in tokens, the needle, the question and "
                 "the answer included: at most the model's context, which is the length when the key is left out and "
                 "the model's context is under 1024",
               .minimum = 16,
               .rule = ">= 16",
               .ownedByView = true},
            {.field = kNeedleDepths,
                .type = "int, 2 to 101",
                .meaning = "needle in a haystack: how many depths the needle is put at, evenly from the document's "
                           "start (0) to just before the question (1); one forward pass each",
                .minimum = 2,
                .rule = ">= 2",
                .ownedByView = true},
            {.field = kNeedleLengths,
                .type = "int, 1 to 16",
                .meaning = "needle in a haystack: Kamradt's grid, the test at this many context lengths evenly spaced "
                           "up to `needle_tokens` (1: at `needle_tokens` alone); `needle_depths` forward passes each",
                .minimum = 1,
                .rule = ">= 1",
                .ownedByView = true},
            {.field = kHaystack,
                .type = "string",
                .meaning = "needle in a haystack: the document, `novel` (the held-out tenth of Pride and Prejudice, "
                           "which ships with the app) or `input` (the Input box's text), repeated to fill "
                           "`needle_tokens`",
                .choices = {"novel", "input"},
                .ownedByView = true},
            {.field = kNeedle,
                .type = "string",
                .meaning = "needle in a haystack: the sentence put into the document",
                .ownedByView = true},
            {.field = kNeedleQuestion,
                .type = "string",
                .meaning = "needle in a haystack: the text that closes the context, asking for the needle's fact",
                .ownedByView = true},
            {.field = kNeedleAnswer,
                .type = "string",
                .meaning = "needle in a haystack: what should follow the question; its probability is read token by "
                           "token",
                .ownedByView = true}}};
}

} // namespace atlas::views::needle
