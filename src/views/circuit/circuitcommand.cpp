#include "analysis/circuits.h"
#include "arguments.h"
#include "circuit/circuit.h"
#include "commandtable.h"
#include "io/atomicfile.h"
#include "model/modeltokenizer.h"
#include "modelinput.h"
#include "util/commalist.h"
#include "util/error.h"
#include "util/workbudget.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

// The Circuit view's subcommands: `circuit` (edge attribution over the residual graph, the faithfulness curve) and
// `path-patch` (one sender's effect through chosen receivers).
namespace atlas::views::circuit {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The model and input of `circuit` and `path-patch`: --model with --text or --tokens, or random weights of GPT-2
// small's shape (--shape gpt2-small --tokens …, for the benchmark in docs/benchmarks.md).
ModelAndInput modelAndInput(const Arguments &args)
{
    if (!args.has("shape"))
        return loadModelAndInput(args);
    if (args.value("shape") != "gpt2-small")
        throw Error("--shape: only 'gpt2-small' is known");
    ModelAndInput run;
    const ModelConfig shape = ModelConfig::gpt2Small();
    run.input.tokens = parseTokenList(args.required("tokens"));
    run.model = std::make_shared<const Model>(Model::random(shape, 1234));
    run.tokenizer = tokenizerForModel(*run.model);
    return run;
}

int circuit(const CommandArgs &argv)
{
    const Arguments args(argv, "circuit");
    setWorkBudgetArguments(args);
    const ModelAndInput run = modelAndInput(args);
    const Corruption corruption = corruptionArgument(args, *run.tokenizer);
    const PatchMetric metric = metricArgument(args, *run.tokenizer, run.model->config.vocab);
    const AttributionMethod method = attributionMethodFromName(args.value("method", "eap"));
    const int steps = method == AttributionMethod::Eap ? 1 : args.intValue("steps", 8, 1, 1000);
    const int top = args.intValue("top", 10, 0);
    auto start = std::chrono::steady_clock::now();
    CircuitAnalysis a(run.model, run.input, corruption, metric);
    const double runs = secondsSince(start);
    start = std::chrono::steady_clock::now();
    EdgeAttribution only = a.attribute(method, steps);
    const double attribution = secondsSince(start);
    const int forwards = only.forwardPasses, backwards = only.backwardPasses;
    start = std::chrono::steady_clock::now();
    const std::shared_ptr<const CircuitScores> s = circuitScores(a, std::move(only));
    const double curve = secondsSince(start);
    const CircuitGraph &g = s->graph;
    std::printf("%s at position %d: clean %.6g, corrupted %.6g\n", metricName(metric, *run.tokenizer).c_str(),
        s->position, s->clean, s->corrupted);
    std::printf("%zu senders, %zu receivers, %zu edges; the clean and corrupted runs in %.3f s\n", g.senders.size(),
        g.receivers.size(), g.edges.size(), runs);
    if (method == AttributionMethod::Eap)
        std::printf("EAP: one backward pass from the corrupted run in %.3f s\n", attribution);
    else
        std::printf("EAP-IG (%d steps): %d forward and %d backward passes between the runs in %.3f s\n", steps,
            forwards, backwards, attribution);
    std::vector<double> exact;
    if (args.flag("exact")) {
        start = std::chrono::steady_clock::now();
        exact = a.everyEdgePatched();
        for (double &m : exact)
            m -= s->corrupted;
        std::printf(
            "every edge patched exactly in %.3f s; Spearman's rank correlation of the estimates with it: %.4f\n",
            secondsSince(start), rankCorrelation(s->attribution.score, exact));
        for (double &m : exact)
            m += s->corrupted;
    }
    const double span = s->clean - s->corrupted;
    if (top > 0)
        std::printf("the %d largest edges (estimated change of the metric, as a fraction of clean - corrupted%s):\n",
            std::min(top, int(g.edges.size())), exact.empty() ? "" : "; patched exactly");
    for (int k = 0; k < std::min(top, int(g.edges.size())); ++k) {
        const int e = s->order[size_t(k)];
        std::printf("  %3d  %-22s %+10.4g %+8.3f", k + 1, g.edgeName(e).c_str(), s->attribution.score[size_t(e)],
            s->attribution.score[size_t(e)] / span);
        if (!exact.empty())
            std::printf("   exact %+8.3f", (exact[size_t(e)] - s->corrupted) / span);
        std::printf("\n");
    }
    std::printf("faithfulness: the circuit of the k largest edges recovers (%.3f s)\n", curve);
    for (size_t i = 0; i < s->stops.size(); ++i)
        std::printf("  k = %6d  %+8.3f\n", s->stops[i], s->recovered(s->kept[i]));
    if (args.has("json"))
        writeFileAtomically(args.value("json"),
            circuitJson(
                *s, s->stops[size_t(s->nearestStop(args.intValue("keep", 20, 0)))], exact.empty() ? nullptr : &exact));
    return 0;
}

int pathPatch(const CommandArgs &argv)
{
    const Arguments args(argv, "path-patch");
    setWorkBudgetArguments(args);
    const ModelAndInput run = modelAndInput(args);
    const Corruption corruption = corruptionArgument(args, *run.tokenizer);
    const PatchMetric metric = metricArgument(args, *run.tokenizer, run.model->config.vocab);
    CircuitAnalysis a(run.model, run.input, corruption, metric);
    const CircuitGraph &g = a.graph();
    const std::string senderName = args.required("sender");
    const int sender = g.senderNamed(senderName);
    if (sender < 0)
        throw Error("--sender " + senderName + ": not a sender of this model (embed, aL.H, mL; layers 0 … "
            + std::to_string(run.model->config.layers - 1) + ", heads 0 … "
            + std::to_string(run.model->config.heads - 1) + ")");
    std::vector<int> receivers;
    std::string names;
    for (const std::string &name : splitCommaList(args.required("receiver"))) {
        const int r = g.receiverNamed(name);
        if (r < 0)
            throw Error("--receiver " + name + ": not a receiver of this model (aL.H.q|k|v, mL, logits)");
        receivers.push_back(r);
        names += (names.empty() ? "" : ", ") + name;
    }
    const bool throughMlps = !args.flag("frozen");
    const auto start = std::chrono::steady_clock::now();
    const double m = a.pathPatched(sender, receivers, throughMlps);
    std::printf("%s at position %d: clean %.6g, corrupted %.6g\n", metricName(metric, *run.tokenizer).c_str(),
        a.position(), a.clean(), a.corrupted());
    std::printf("path %s -> %s (every other head frozen at its corrupted output, the feed-forwards %s): metric %.6g, "
                "recovered %.4f (%.3f s)\n",
        senderName.c_str(), names.c_str(), throughMlps ? "recomputed" : "frozen too", m, a.recovered(m),
        secondsSince(start));
    return 0;
}

} // namespace

std::vector<CliCommand> commands()
{
    using namespace atlas::cli;
    const Options shape = {{"shape", "gpt2-small", "random weights of GPT-2 small's shape (with --tokens)"}};
    return {{"circuit",
                {{"(--model M --text \"...\" | --shape gpt2-small --tokens 1,2) --target TOKEN [--contrast TOKEN]",
                     "edge attribution patching over the residual graph: every edge's estimated effect on "
                     "logit(target) − logit(contrast) (or p(target)) in the corrupted run, the largest listed, and "
                     "the faithfulness of the circuits of the largest edges"},
                    {"... (--corrupted-text \"...\" | --corrupted-tokens 1,2 | --noise-positions 3,4 [--seed S])",
                        "the corrupted run, as for patch"},
                    {"... [--method eap|eap-ig --steps N] [--top K] [--exact] [--json FILE [--keep K]]",
                        "EAP-IG's gradients; the K largest edges listed; every edge patched exactly beside its "
                        "estimate; the graph as JSON with the circuit of about K edges marked"}},
                kModel + shape + kCorruption
                    + Options {{"method", "eap|eap-ig", "how the edges are estimated (default eap)"},
                        {"steps", "N", "EAP-IG's gradients (default 8)"},
                        {"top", "K", "the largest edges listed (default 10)"},
                        {"exact", "", "also patch every edge exactly and report the rank correlation"},
                        {"json", "FILE", "write the graph, the estimates and the curve as JSON"},
                        {"keep", "K", "with --json: the circuit marked, the curve's stop nearest K edges (default 20)"}}
                    + kWorkBudget,
                circuit},
        {"path-patch",
            {{"(--model M --text \"...\" | --shape gpt2-small --tokens 1,2) --target TOKEN [--contrast TOKEN]",
                 "path patching (Wang et al. 2022): the sender's clean output reaching the receivers alone"},
                {"... (--corrupted-text \"...\" | --corrupted-tokens 1,2 | --noise-positions 3,4) --sender a0.1 "
                 "--receiver a1.2.q[,a1.2.k] [--frozen]",
                    "sender embed, aL.H or mL; receivers aL.H.q|k|v, mL or logits; --frozen freezes the "
                    "feed-forwards too (the edge's own patch)"}},
            kModel + shape + kCorruption
                + Options {{"sender", "NODE", "embed, aL.H (head H of layer L) or mL (layer L's feed-forward)"},
                    {"receiver", "NODES", "aL.H.q, aL.H.k, aL.H.v, mL or logits, comma-separated"},
                    {"frozen", "", "freeze the feed-forwards too, not only the other heads"}}
                + kWorkBudget,
            pathPatch}};
}

} // namespace atlas::views::circuit
