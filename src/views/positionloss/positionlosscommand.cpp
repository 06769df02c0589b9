#include "arguments.h"
#include "commandtable.h"
#include "io/atomicfile.h"
#include "model/builtinmodels.h"
#include "modelinput.h"
#include "positionloss/positionloss.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>

// The Position loss view's subcommand: `position-loss`, the same curves on the command line.
namespace atlas::views::positionloss {

namespace {

void printCurve(const PositionLossCurve &c)
{
    if (c.windows > 0)
        std::printf(
            "\n%s on %d held-out windows of its task, %zu positions\n", c.model.c_str(), c.windows, c.loss.size());
    else
        std::printf("\n%s on the text, %zu positions scored\n", c.model.c_str(), c.loss.size());
    std::printf("%15s  %12s\n", "tokens read", "loss (nats)");
    for (const PositionBin &b : binned(c.loss))
        std::printf("%15s  %12.4f\n",
            (b.first == b.last ? std::to_string(b.first) : std::to_string(b.first) + "-" + std::to_string(b.last))
                .c_str(),
            b.loss);
    int late = 0, early = 0;
    const double score = inContextScore(c.loss, &late, &early);
    if (c.windows > 0 && std::isfinite(score) && late > early) // one text is too noisy for it (as in the view)
        std::printf("in-context learning score (token %d less token %d, each +-10%%): %+.4f nats, standard error "
                    "%.4f\n",
            late, early, score, c.scoreError);
}

nlohmann::json curveJson(const PositionLossCurve &c)
{
    nlohmann::json loss = nlohmann::json::array(), bins = nlohmann::json::array();
    for (double l : c.loss)
        loss.push_back(std::isnan(l) ? nlohmann::json(nullptr) : nlohmann::json(l));
    for (const PositionBin &b : binned(c.loss))
        bins.push_back({{"first", b.first}, {"last", b.last}, {"loss", b.loss}});
    int late = 0, early = 0;
    const double score = inContextScore(c.loss, &late, &early);
    const bool scored = c.windows > 0 && std::isfinite(score);
    return {{"model", c.model}, {"windows", c.windows}, {"loss", loss}, {"bins", bins},
        {"in_context_score", scored ? nlohmann::json(score) : nlohmann::json(nullptr)}, {"score_tokens", {late, early}},
        {"score_error",
            scored && std::isfinite(c.scoreError) ? nlohmann::json(c.scoreError) : nlohmann::json(nullptr)}};
}

int positionLoss(const CommandArgs &argv)
{
    const Arguments args(argv, "position-loss");
    const bool text = args.has("text") || args.has("text-file") || args.has("tokens");
    const auto start = std::chrono::steady_clock::now();
    std::vector<PositionLossCurve> curves;
    std::shared_ptr<const Model> model;
    if (text) {
        ModelAndInput m = loadModelAndInput(args);
        model = m.model;
        if (!model->config.causal || model->config.isEncoderDecoder())
            throw Error("position-loss scores each next token after the tokens before it: " + model->name
                + " is not a causal model of one stack");
        if (m.input.tokens.size() < 2)
            throw Error("position-loss needs a text of at least 2 tokens");
        Engine engine(model, m.input, traceOptionsArgument(args));
        engine.runToEnd();
        curves.push_back(
            textLossCurve(*model, m.input, [&](const std::vector<int> &rows) { return engine.nextTokenProbs(rows); }));
    } else {
        model = loadModel(args.required("model"));
    }
    const int windows = args.intValue("windows", PositionLossAnalysis::kWindows, 1, 100000);
    if (readsTaskWindows(*model))
        curves.insert(curves.begin(), taskLossCurve(model, windows));
    else if (!text)
        throw Error(model->name
            + " has no task of corpus windows (chars, words) to draw windows from: give a text "
              "(--text, --text-file or --tokens) to score instead");
    if (args.has("baseline-model"))
        curves.insert(curves.begin() + 1, taskLossCurve(loadModel(args.value("baseline-model")), windows));
    for (const PositionLossCurve &c : curves)
        printCurve(c);
    std::printf("\n%.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (args.has("json")) {
        nlohmann::json j = nlohmann::json::array();
        for (const PositionLossCurve &c : curves)
            j.push_back(curveJson(c));
        writeFileAtomically(args.value("json"), j.dump(1) + "\n");
    }
    return 0;
}

} // namespace

std::vector<CliCommand> commands()
{
    using namespace atlas::cli;
    return {{"position-loss",
        {{"--model M [--windows N] [--baseline-model B]",
             "the next token's loss by how many tokens were read, on held-out windows of the model's task (chars, "
             "words), gathered two bins a doubling, and the in-context learning score"},
            {"--model M --text \"...\" | --text-file FILE | --tokens 1,2,3",
                "the same on a text read once (any causal model; with a task's model, beside its windows)"},
            {"... [--json FILE]", "every position's loss and the bins as JSON"}},
        kModel
            + Options {{"windows", "N", "held-out windows of the model's task (default 64)"},
                {"baseline-model", "B", "a second model scored on windows of its own task"},
                {"text", "\"...\"", "a text to score"}, {"text-file", "FILE", "a UTF-8 text file to score"},
                {"tokens", "1,2,3", "token ids to score"},
                {"memory-budget", "GIB", "the memory the traced run of the text may hold (default 8)"},
                {"attention-trace", "auto|whole|on-demand|checkpoints|inputs",
                    "how the run of the text keeps its attention (default auto)"},
                {"json", "FILE", "also write the numbers as JSON"}},
        positionLoss}};
}

} // namespace atlas::views::positionloss
