#include "arguments.h"
#include "commandtable.h"
#include "engine/inputbuilder.h"
#include "io/atomicfile.h"
#include "model/modeltokenizer.h"
#include "modelinput.h"
#include "needle/needle.h"
#include "train/corpus.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>

// The Needle in a haystack view's subcommand: `needle`, the same test on the command line.
namespace atlas::views::needle {

namespace {

int needle(const CommandArgs &argv)
{
    const Arguments args(argv, "needle");
    const std::shared_ptr<const Model> model = loadModel(args.required("model"));
    const std::unique_ptr<Tokenizer> tokenizer = tokenizerForModel(*model);
    NeedleTest test;
    test.haystack = args.has("haystack") ? readInputText(args.value("haystack")) : corpusHeldOut();
    test.needle = args.value("needle", kNeedle.fallback);
    test.question = args.value("question", kNeedleQuestion.fallback);
    test.answer = args.value("answer", kNeedleAnswer.fallback);
    test.tokens = args.intValue("tokens", kNeedleTokens.fallback, 16);
    test.depths = args.intValue("depths", kNeedleDepths.fallback, 2);
    const auto start = std::chrono::steady_clock::now();
    const NeedleResult r = needleInAHaystack(model, *tokenizer, test, memoryBudgetArgument(args));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::printf("%s: %d tokens of %s, the needle \"%s\" at %zu depths, then \"%s\"; the answer \"%s\" is %zu "
                "token(s)\n",
        r.model.c_str(), r.tokens, args.has("haystack") ? args.value("haystack").c_str() : "the novel's held-out text",
        test.needle.c_str(), r.depths.size(), test.question.c_str(), test.answer.c_str(), r.answer.size());
    std::printf("attention: the share of position %d's (the question's last token) on the needle, heads averaged\n",
        r.questionPosition);
    std::printf("depth  needle at      P(answer)   P(first)  greedy  attention by layer\n");
    for (const NeedleAtDepth &d : r.depths) {
        std::printf("%5.2f  %5d-%-5d  %10.4g  %9.4g  %-6s ", d.depth, d.needleStart, d.needleEnd - 1,
            d.answerProbability, d.firstTokenProbability, d.greedy ? "yes" : "no");
        for (float a : d.attention)
            std::printf(" %.3f", a);
        std::printf("\n");
    }
    std::printf("%zu forward passes in %.1f s\n", r.depths.size(), seconds);

    if (args.has("json")) {
        nlohmann::json depths = nlohmann::json::array();
        for (const NeedleAtDepth &d : r.depths)
            depths.push_back({{"depth", d.depth}, {"needle_start", d.needleStart}, {"needle_end", d.needleEnd},
                {"answer_probability", d.answerProbability}, {"first_token_probability", d.firstTokenProbability},
                {"greedy", d.greedy}, {"attention", d.attention}});
        const nlohmann::json j = {{"model", r.model}, {"tokens", r.tokens}, {"needle", test.needle},
            {"question", test.question}, {"answer", test.answer}, {"answer_ids", r.answer},
            {"question_position", r.questionPosition}, {"depths", depths}};
        writeFileAtomically(args.value("json"), j.dump(1) + "\n");
    }
    return 0;
}

} // namespace

std::vector<CliCommand> commands()
{
    using namespace atlas::cli;
    return {{"needle",
        {{"--model M [--tokens N --depths D] [--haystack FILE] [--needle \"...\" --question \"...\" --answer \"...\"]",
             "a needle in a haystack: a sentence put at D depths of a long document (default the novel's held-out "
             "text), a question after it; the answer's probability at each depth and each layer's attention on "
             "the needle"},
            {"... [--json FILE]", "the same numbers as JSON"}},
        kModel
            + Options {{"tokens", "N", "the context's length in tokens, everything included (default 1024)"},
                {"depths", "D", "depths from the start (0) to just before the question (1), evenly (default 11)"},
                {"haystack", "FILE", "the document, a UTF-8 text file (default the novel's held-out tenth)"},
                {"needle", "\"...\"", "the sentence put into the document"},
                {"question", "\"...\"", "the text that closes the context"},
                {"answer", "\"...\"", "what should follow the question"},
                {"json", "FILE", "also write the numbers as JSON"},
                {"memory-budget", "GIB", "the memory each traced run may hold (default 8)"}},
        needle}};
}

} // namespace atlas::views::needle
