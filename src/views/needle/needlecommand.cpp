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
    test.lengths = args.intValue("lengths", kNeedleLengths.fallback, 1);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<NeedleResult> runs = needleGrid(model, *tokenizer, test, memoryBudgetArgument(args));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    const NeedleResult &last = runs.back();
    std::printf("%s: %s tokens of %s, the needle \"%s\" at %zu depths, then \"%s\"; the answer \"%s\" is %zu "
                "token(s)\n",
        last.model.c_str(),
        (runs.size() > 1 ? std::to_string(runs.front().tokens) + " to " : std::string())
            .append(std::to_string(last.tokens))
            .c_str(),
        args.has("haystack") ? args.value("haystack").c_str() : "the novel's held-out text", test.needle.c_str(),
        last.depths.size(), test.question.c_str(), test.answer.c_str(), last.answer.size());
    for (const NeedleResult &r : runs) {
        if (runs.size() > 1)
            std::printf("\n%d tokens:\n", r.tokens);
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
    }
    if (runs.size() > 1) { // Kamradt's grid: P(answer), a row per depth, a column per length
        std::printf("\nP(answer) by depth (rows) and context length (columns; * where greedy decoding gives it)\n"
                    "depth ");
        for (const NeedleResult &r : runs)
            std::printf(" %10d", r.tokens);
        std::printf("\n");
        for (size_t d = 0; d < last.depths.size(); ++d) {
            std::printf("%5.2f ", last.depths[d].depth);
            for (const NeedleResult &r : runs)
                std::printf(" %9.3g%c", r.depths[d].answerProbability, r.depths[d].greedy ? '*' : ' ');
            std::printf("\n");
        }
    }
    std::printf("%zu forward passes in %.1f s\n", runs.size() * last.depths.size(), seconds);

    if (args.has("json")) {
        const auto runJson = [](const NeedleResult &r) {
            nlohmann::json depths = nlohmann::json::array();
            for (const NeedleAtDepth &d : r.depths)
                depths.push_back({{"depth", d.depth}, {"needle_start", d.needleStart}, {"needle_end", d.needleEnd},
                    {"answer_probability", d.answerProbability}, {"first_token_probability", d.firstTokenProbability},
                    {"greedy", d.greedy}, {"attention", d.attention}});
            return nlohmann::json {{"tokens", r.tokens}, {"question_position", r.questionPosition}, {"depths", depths}};
        };
        nlohmann::json j = runJson(last); // one length: its numbers at the top, as before the grid
        j["model"] = last.model;
        j["needle"] = test.needle;
        j["question"] = test.question;
        j["answer"] = test.answer;
        j["answer_ids"] = last.answer;
        if (runs.size() > 1) {
            j["runs"] = nlohmann::json::array(); // the grid, shortest context first; the last is the one above
            for (const NeedleResult &r : runs)
                j["runs"].push_back(runJson(r));
        }
        writeFileAtomically(args.value("json"), j.dump(1) + "\n");
    }
    return 0;
}

} // namespace

std::vector<CliCommand> commands()
{
    using namespace atlas::cli;
    return {{"needle",
        {{"--model M [--tokens N --depths D --lengths L] [--haystack FILE] [--needle \"...\" --question \"...\" "
          "--answer \"...\"]",
             "a needle in a haystack: a sentence put at D depths of a long document (default the novel's held-out "
             "text), a question after it; the answer's probability at each depth and each layer's attention on "
             "the needle"},
            {"... [--json FILE]", "the same numbers as JSON"}},
        kModel
            + Options {{"tokens", "N", "the context's length in tokens, everything included (default 1024)"},
                {"depths", "D", "depths from the start (0) to just before the question (1), evenly (default 11)"},
                {"lengths", "L",
                    "Kamradt's grid: the test at L context lengths evenly spaced up to N, P(answer) printed as a "
                    "table of depth by length (default 1: N alone)"},
                {"haystack", "FILE", "the document, a UTF-8 text file (default the novel's held-out tenth)"},
                {"needle", "\"...\"", "the sentence put into the document"},
                {"question", "\"...\"", "the text that closes the context"},
                {"answer", "\"...\"", "what should follow the question"},
                {"json", "FILE", "also write the numbers as JSON"},
                {"memory-budget", "GIB", "the memory each traced run may hold (default 8)"}},
        needle}};
}

} // namespace atlas::views::needle
