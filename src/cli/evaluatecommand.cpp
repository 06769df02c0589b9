#include "analysis/headimportance.h"
#include "analysis/layerdrop.h"
#include "analysis/lostinthemiddle.h"
#include "analysis/tokenreduction.h"
#include "arguments.h"
#include "commands.h"
#include "model/builtinmodels.h"
#include "modelinput.h"
#include "train/evaluation.h"
#include "util/error.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>

namespace atlas {

namespace {

void printScores(const char *what, const Evaluation &e)
{
    std::printf("%sheld-out loss %.4f, token accuracy %.2f%%, exact match %.2f%%\n", what, e.loss,
        100 * e.tokenAccuracy, 100 * e.exactMatch);
}

// Every head switched off alone, as a layer × head table of the loss increase and the token accuracy lost.
void printHeadImportance(std::shared_ptr<const Model> model, HeadAblation::Mode mode, int examples)
{
    const HeadImportance r = headImportance(model, mode, examples);
    std::printf("%s on %s, each head switched off alone (%s ablation, %d examples)\n", model->name.c_str(),
        model->config.task.c_str(), ablationModeName(mode), examples);
    printScores("whole model: ", r.baseline);
    std::printf("loss increase (nats) | token accuracy lost (points)\n");
    for (size_t l = 0; l < r.without.size(); ++l) {
        std::printf("  layer %zu:", l);
        for (size_t h = 0; h < r.without[l].size(); ++h)
            std::printf("  h%zu %+7.3f", h, r.lossIncrease(int(l), int(h)));
        std::printf("  |");
        for (size_t h = 0; h < r.without[l].size(); ++h)
            std::printf(" %5.1f", 100 * (r.baseline.tokenAccuracy - r.without[l][h].tokenAccuracy));
        std::printf("\n");
    }
}

// The model's task with blocks pruned, both ways, at every depth (analysis/layerdrop.h).
void printDepthSweep(std::shared_ptr<const Model> model, int examples)
{
    const DepthSweep sweep = depthSweep(model, examples);
    std::printf("%s on %s with blocks pruned (%d examples): token accuracy | exact match\n", sweep.model.c_str(),
        sweep.task.c_str(), examples);
    std::printf("%6s  %-20s %-20s\n", "blocks", "first k kept", "every other kept");
    for (size_t k = 0; k < sweep.first.size(); ++k) {
        const PrunedDepth &a = sweep.first[k], &b = sweep.everyOther[k];
        std::printf("%6d  %6.2f%% | %6.2f%%    %6.2f%% | %6.2f%%   (drops %s)\n", a.kept, 100 * a.score.tokenAccuracy,
            100 * a.score.exactMatch, 100 * b.score.tokenAccuracy, 100 * b.score.exactMatch,
            b.dropped.empty() ? "none" : [&] {
                std::string text;
                for (int l : b.dropped)
                    text.append(text.empty() ? "" : ",").append(std::to_string(l));
                return text;
            }().c_str());
    }
}

// A shared model's task with its block applied 1 … 2L times (analysis/layerdrop.h's stepSweep).
void printStepSweep(std::shared_ptr<const Model> model, int examples)
{
    const StepSweep sweep = stepSweep(model, std::min(2 * model->config.layers, Model::kMaxSharedSteps), examples);
    std::printf("%s on %s, its one block applied 1 … %zu times (trained with %d; %d examples)\n", sweep.model.c_str(),
        sweep.task.c_str(), sweep.scores.size(), sweep.trained, examples);
    std::printf("%6s  %-15s %-10s\n", "steps", "token accuracy", "loss");
    for (size_t s = 0; s < sweep.scores.size(); ++s)
        std::printf("%6zu  %13.2f%%  %8.4f%s\n", s + 1, 100 * sweep.scores[s].tokenAccuracy, sweep.scores[s].loss,
            int(s) + 1 == sweep.trained ? "   (trained)" : "");
}

// The model's task with tokens eliminated layer by layer at every geometric rate (analysis/tokenreduction.h).
void printTokenSweep(std::shared_ptr<const Model> model, int examples)
{
    const ReductionSweep sweep = tokenReductionSweep(model, examples);
    std::printf("%s on %s with tokens eliminated after each layer (PoWER-BERT; %d examples, the targets kept)\n",
        sweep.model.c_str(), sweep.task.c_str(), examples);
    std::printf("%5s  %-22s %6s  %-16s %-16s %-16s\n", "rate", "tokens after each layer", "work", "by significance",
        "at random", "targets' attention");
    for (const ReductionPoint &p : sweep.points)
        std::printf("%5.2f  %-22s %5.1f%%  %6.2f%% %6.3f  %6.2f%% %6.3f  %6.2f%% %6.3f\n", p.rate,
            retentionScheduleText(TokenRetention::geometric(p.rate, sweep.layers).keep).c_str(), 100 * p.work,
            100 * p.significance.tokenAccuracy, p.significance.loss, 100 * p.random.tokenAccuracy, p.random.loss,
            100 * p.targets.tokenAccuracy, p.targets.loss);
    std::printf("(work: the token-positions the sub-layers process, as a share of the whole model's; each ranking's "
                "token accuracy and loss in nats)\n");
}

// A retrieval model's accuracy against the position of the asked pair, and where its answer looks (last layer).
void printByPosition(std::shared_ptr<const Model> model, int examples)
{
    const RetrievalByPosition r = retrievalByPosition(model, examples);
    std::printf("%s: the value of the asked pair named, by its position among %d pairs (%d held-out contexts each)\n",
        r.model.c_str(), kRetrievalPairs, examples);
    std::printf(
        "%8s  %7s  %7s   the answer's attention on each pair in the last layer (%%)\n", "position", "exact", "digits");
    for (size_t p = 0; p < r.exact.size(); ++p) {
        std::printf("%8zu  %6.1f%%  %6.1f%%  ", p, 100 * r.exact[p], 100 * r.digits[p]);
        for (float mass : r.attention.back()[p])
            std::printf(" %4.0f", 100 * mass);
        std::printf("\n");
    }
    std::printf("first pair %.1f%%, middle pairs (positions 3-6) %.1f%%, last pair %.1f%% exact\n", 100 * r.first(),
        100 * r.middle(), 100 * r.last());
}

// The sweeps that score the model's own task (atlas_task) many ways, each given alone.
struct OwnTaskSweep
{
    const char *flag, *what;
    std::vector<std::string> refused;
    std::function<void(const Arguments &, std::shared_ptr<const Model>, int)> print;
};

bool runOwnTaskSweep(const Arguments &args, std::shared_ptr<const Model> model, int examples)
{
    const std::vector<std::string> everyOption = {"ablate-heads", "drop-layers", "task", "length-scale"};
    const OwnTaskSweep sweeps[] = {
        {"layer-sweep", "prunes blocks at every depth", everyOption,
            [](const Arguments &, auto m, int n) { printDepthSweep(m, n); }},
        {"step-sweep", "applies a shared block 1 … 2L times", everyOption,
            [](const Arguments &, auto m, int n) { printStepSweep(m, n); }},
        {"token-sweep", "eliminates tokens at every rate", everyOption,
            [](const Arguments &, auto m, int n) { printTokenSweep(m, n); }},
        {"by-position", "asks a retrieval model for each pair in turn", everyOption,
            [](const Arguments &, auto m, int n) { printByPosition(m, n); }},
        {"head-importance", "switches off every head in turn", {"ablate-heads", "task", "length-scale"},
            [](const Arguments &a, auto m, int n) {
                printHeadImportance(m, parseAblationMode(a.value("ablation", "zero"), "--ablation"), n);
            }},
    };
    for (const OwnTaskSweep &sweep : sweeps) {
        if (!args.flag(sweep.flag))
            continue;
        std::string others;
        for (const std::string &o : sweep.refused)
            others += (others.empty() ? "--" : ", --") + o;
        for (const std::string &o : sweep.refused)
            if (args.has(o))
                throw Error(std::string("--") + sweep.flag + " " + sweep.what
                    + " on the model's own task (atlas_task): give it without " + others);
        sweep.print(args, model, examples);
        return true;
    }
    return false;
}

} // namespace

// Held-out loss, token accuracy and exact match, on examples S times as long as training's when S > 1
// (extrapolation; docs/models.md, "Positions"); with heads switched off beside the whole model's; or the importance
// of every head (analysis/headimportance.h).
int evaluateCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "evaluate");
    const auto model = loadModel(args.required("model"));
    const int examples = args.intValue("examples", 256, 1, 100000), scale = args.intValue("length-scale", 1, 1, 64);
    if (examples < 1 || examples > 100000 || scale < 1 || scale > 64)
        throw Error("--examples must be in 1..100000 and --length-scale in 1..64");
    if (runOwnTaskSweep(args, model, examples))
        return 0;
    const auto task = Task::create(args.required("task"), model->config.context);
    const uint64_t seed = uint64_t(args.intValue("seed", 12345, 0, std::numeric_limits<int>::max()));
    const Evaluation e = evaluateOnTask(model, *task, examples, seed, scale);
    std::printf("%s on %s at %dx the training length: held-out loss %.4f, token accuracy %.2f%%, exact match "
                "%.2f%% (%d examples)\n",
        model->name.c_str(), task->name().c_str(), scale, e.loss, 100 * e.tokenAccuracy, 100 * e.exactMatch, examples);
    if (args.has("drop-layers")) {
        const std::vector<int> dropped
            = parseLayerList(args.value("drop-layers"), model->config.layers, "--drop-layers");
        printScores(("blocks " + args.value("drop-layers") + " dropped: ").c_str(),
            evaluateOnTask(model, *task, examples, seed, scale, {}, dropped));
    }
    if (args.has("ablate-heads")) {
        const HeadAblation ablation = ablationArgument(args, model, {});
        printScores(
            ("heads " + args.value("ablate-heads") + " off (" + ablationModeName(ablation.mode) + "): ").c_str(),
            evaluateOnTask(model, *task, examples, seed, scale, ablation));
    }
    return 0;
}

} // namespace atlas
