#include "analysis/headclasses.h"
#include "analysis/headpatterns.h"
#include "arguments.h"
#include "commands.h"
#include "io/atomicfile.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace atlas {

namespace {

// --classify: every head's score for each kind, a table per kind, and the heads that score highest.
int classify(const Arguments &args, std::shared_ptr<const Model> model)
{
    std::vector<int> tokens;
    if (args.has("text")) { // the text's tokens, then the same again
        tokens = tokenizerForModel(*model)->encode(args.value("text"));
        tokens.resize(std::min(tokens.size(), size_t(model->config.context / 2)));
        tokens.insert(tokens.end(), tokens.begin(), tokens.end());
    } else {
        tokens = repeatedRandomTokens(
            model->config, args.intValue("half", 32, 2, 4096), uint64_t(args.intValue("seed", 0, 0)));
    }
    const HeadClasses classes = classifyHeads(model, tokens);
    std::printf("on %d %s, then the same %d again\n", classes.half,
        args.has("text") ? "tokens of the text" : "random tokens", classes.half);
    nlohmann::json json = {{"model", model->name}, {"tokens", tokens}, {"half", classes.half},
        {"layers", classes.layers}, {"heads", classes.heads}};
    for (int k = 0; k < kHeadClassCount; ++k) {
        const auto kind = HeadClass(k);
        std::printf("%s: %s\n", headClassTitle(kind), headClassDefinition(kind));
        nlohmann::json rows = nlohmann::json::array();
        int bestLayer = 0, bestHead = 0;
        for (int l = 0; l < classes.layers; ++l) {
            std::printf("  layer %2d:", l);
            std::vector<double> row;
            for (int h = 0; h < classes.heads; ++h) {
                const double s = classes.score(kind, l, h);
                std::printf(" %6.3f", s);
                row.push_back(s);
                if (s > classes.score(kind, bestLayer, bestHead))
                    std::tie(bestLayer, bestHead) = std::pair(l, h);
            }
            std::printf("\n");
            rows.push_back(row);
        }
        std::printf(
            "  highest: layer %d head %d, %.3f\n", bestLayer, bestHead, classes.score(kind, bestLayer, bestHead));
        json["scores"][headClassName(kind)] = rows;
        json["definitions"][headClassName(kind)] = headClassDefinition(kind);
    }
    if (args.has("json"))
        writeFileAtomically(args.value("json"), json.dump(1) + "\n");
    return 0;
}

} // namespace

// For each pattern of the task, the attention mass every head puts where the pattern says it should, on held-out
// examples. (The options: commandtable.cpp.)
int analyzeHeadsCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "analyze-heads");
    const auto model = loadModel(args.required("model"));
    if (args.flag("classify")) {
        if (args.has("task") || args.has("examples"))
            throw Error("--classify scores every head on a repeated sequence: it takes no --task or --examples");
        if (args.has("text") && (args.has("half") || args.has("seed")))
            throw Error("--text gives the sequence's first half: --half and --seed draw a random one instead");
        return classify(args, model);
    }
    for (const char *option : {"half", "seed", "json", "text"})
        if (args.has(option))
            throw Error(std::string("--") + option + " goes with --classify");
    const auto task = Task::create(args.required("task"), model->config.context);
    const int examples = args.intValue("examples", 200, 1, 100000);
    for (const HeadPattern &pattern : headPatterns(task->name())) {
        std::printf("%s: %s\n", pattern.name.c_str(), pattern.description.c_str());
        const auto mass = patternMass(model, *task, pattern, examples);
        for (size_t l = 0; l < mass.size(); ++l) {
            std::printf("  layer %zu:", l);
            for (double m : mass[l])
                std::printf("  %5.1f%%", 100 * m);
            std::printf("   best head at each position: %5.1f%%\n",
                100 * patternCoverage(model, *task, pattern, int(l), examples));
        }
    }
    return 0;
}

} // namespace atlas
