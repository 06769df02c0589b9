#include "analysis/activationpatching.h"
#include "arguments.h"
#include "commandtable.h"
#include "io/atomicfile.h"
#include "model/modeltokenizer.h"
#include "modelinput.h"
#include "util/error.h"
#include "util/workbudget.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

// The Patching view's subcommand: `patch`, activation patching on the command line.
namespace atlas::views::patching {

namespace {

int patch(const CommandArgs &argv)
{
    const Arguments args(argv, "patch");
    setWorkBudgetArguments(args);
    ModelAndInput run;
    if (args.has("shape")) { // random weights of GPT-2 small's shape, for the benchmark (docs/benchmarks.md)
        if (args.value("shape") != "gpt2-small")
            throw Error("--shape: only 'gpt2-small' is known");
        const ModelConfig shape = ModelConfig::gpt2Small();
        run.input.tokens = parseTokenList(args.required("tokens"));
        // Refused before the weights are drawn when the passes alone are over the budget (the trace's bytes are
        // checked with the rest, in activationPatching).
        const PatchingWork work
            = patchingWork(shape, int(run.input.tokens.size()), patchSiteFromName(args.value("site", "residual")), 0.0);
        if (const std::string why = overBudget(work.what, work.flops, 0.0, WorkBudget::process()); !why.empty())
            throw Error(why);
        run.model = std::make_shared<const Model>(Model::random(shape, 1234));
        run.tokenizer = tokenizerForModel(*run.model);
    } else {
        run = loadModelAndInput(args);
    }
    const ModelConfig &config = run.model->config;
    const Corruption corruption = corruptionArgument(args, *run.tokenizer);
    PatchingOptions options;
    options.site = patchSiteFromName(args.value("site", "residual"));
    options.metric = metricArgument(args, *run.tokenizer, config.vocab);
    const auto start = std::chrono::steady_clock::now();
    const PatchingResult r = activationPatching(run.model, run.input, corruption, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    const std::string metric = metricName(options.metric, *run.tokenizer);
    std::printf("%s at position %d: clean %.6g, corrupted %.6g\n", metric.c_str(), r.position, r.clean, r.corrupted);
    std::printf("recovered fraction per %s (rows: %s)\n",
        options.site == PatchSite::Residual    ? "position"
            : options.site == PatchSite::Heads ? "head"
                                               : "layer",
        options.site == PatchSite::Residual ? "the stream entering each block" : "layers");
    for (int l = 0; l < r.rows; ++l) {
        std::printf("  %2d:", l);
        for (int c = 0; c < r.cols; ++c)
            std::printf(" %7.3f", r.recoveredAt(l, c));
        std::printf("\n");
    }
    std::printf("%d patched forward passes in %.3f s\n", r.patches, seconds);
    if (args.has("json")) {
        const nlohmann::json j = {{"site", patchSiteName(r.site)}, {"metric", metric}, {"position", r.position},
            {"clean", r.clean}, {"corrupted", r.corrupted}, {"rows", r.rows}, {"cols", r.cols},
            {"recovered", r.recovered}, {"metric_patched", r.metric}, {"tokens", run.input.tokens},
            {"corrupted_tokens", r.corruptedTokens}, {"patches", r.patches}, {"seconds", seconds}};
        writeFileAtomically(args.value("json"), j.dump(1) + "\n");
    }
    return 0;
}

} // namespace

std::vector<CliCommand> commands()
{
    using namespace atlas::cli;
    return {{"patch",
        {{"(--model M --text \"...\" | --shape gpt2-small --tokens 1,2) --target TOKEN [--contrast TOKEN]",
             "activation patching: how much of logit(target) − logit(contrast) (or p(target)) each clean "
             "activation restores in the corrupted run"},
            {"... (--corrupted-text \"...\" | --corrupted-tokens 1,2 | --noise-positions 3,4 [--seed S])",
                "the corrupted run: another input of as many tokens, or noise on the embedding"},
            {"... [--position P] [--site residual|heads|mlp] [--json FILE]",
                "the position measured, what is patched, the results as JSON"}},
        kModel + Options {{"shape", "gpt2-small", "random weights of GPT-2 small's shape"}} + kCorruption
            + Options {{"site", "residual|heads|mlp", "what is patched"},
                {"json", "FILE", "also write the results as JSON"}}
            + kWorkBudget,
        patch}};
}

} // namespace atlas::views::patching
