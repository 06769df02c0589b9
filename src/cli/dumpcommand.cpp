#include "analysis/attentionmask.h"
#include "analysis/earlyexit.h"
#include "analysis/headimportance.h"
#include "analysis/logitlens.h"
#include "analysis/mostprobable.h"
#include "analysis/objectiveexample.h"
#include "analysis/tokenreduction.h"
#include "arguments.h"
#include "commands.h"
#include "engine/attentiontrace.h"
#include "engine/engine.h"
#include "engine/outputhead.h"
#include "engine/recompute.h"
#include "io/atomicfile.h"
#include "io/npy.h"
#include "io/stageddirectory.h"
#include "modelinput.h"
#include "trace/names.h"
#include "train/backprop.h"
#include "train/objectives.h"
#include "train/strategyrunner.h"
#include "util/commalist.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>

namespace atlas {

namespace {

// "--targets 3290,318,-1": token ids, or -1 for a position left out of the loss.
std::vector<int> parseTargets(const std::string &text)
{
    std::vector<int> ids;
    for (const std::string &item : splitCommaList(text)) {
        int value = 0;
        auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
        if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || value < -1)
            throw Error("--targets: '" + item + "' is not a token id or -1");
        ids.push_back(value);
    }
    return ids;
}

// --logits-at "0,17,last": positions of the input, "last" its last; every one inside it.
std::vector<int> positionsArgument(const std::string &text, int tokens)
{
    std::vector<int> positions;
    for (const std::string &item : splitCommaList(text)) {
        const int p = item == "last" ? tokens - 1 : parseIntList(item, "--logits-at", "a position or 'last'").front();
        if (p < 0 || p >= tokens)
            throw Error("--logits-at: position " + item + " is outside the input's " + std::to_string(tokens)
                + " tokens (0 … " + std::to_string(tokens - 1) + ")");
        positions.push_back(p);
    }
    return positions;
}

// The model's logits and probabilities at chosen positions, logits.at [n, V] and next_probs.at [n, V]: rows of the
// whole trace's, or computed from the last stream when the run keeps them on demand (engine/outputhead.h).
void writeLogitsAt(const std::string &dir, const Engine &engine, const std::vector<int> &positions,
    nlohmann::json &tensors, nlohmann::json &manifest)
{
    const Tensor logits = nextTokenLogits(engine.model(), engine.program(), engine.trace(), engine.input(), positions);
    const bool kept = engine.trace().contains("logits");
    // the head run once: on demand, the probabilities of the logits just computed
    const Tensor probs = kept ? engine.nextTokenProbs(positions) : nextTokenProbsOf(logits);
    for (const auto &[name, t] : {std::pair {"logits.at", &logits}, std::pair {"next_probs.at", &probs}}) {
        writeNpy((std::filesystem::path(dir) / (std::string(name) + ".npy")).string(), *t);
        tensors.push_back({{"name", name}, {"shape", t->shape()},
            {"formula",
                std::string(name) + " of the positions in logits_at"
                    + (kept ? ": rows of the trace's" : ", computed from the last stream by the output head")},
            {"op", "derived by dump"}});
    }
    manifest["logits_at"] = positions;
}

// The gradients from the traced run, or, with --memory-strategy, from a training pass under that strategy (the
// same numbers for checkpoint; from rebuilt activations for reversible).
Gradients gradientsOf(const Arguments &args, const Engine &engine, const std::vector<int> &targets)
{
    if (!args.has("memory-strategy"))
        return backward(engine.model(), engine.input(), engine.trace(), targets);
    MemoryOptions options;
    options.strategy = parseMemoryStrategy(args.value("memory-strategy"));
    options.checkpointEvery = args.intValue("checkpoint-every", 0, 0, 1 << 20);
    options.ffnChunks = args.intValue("ffn-chunks", 1, 1, 1 << 20);
    StrategyRunner runner(engine.model(), engine.input(), options);
    runner.forward();
    Gradients g;
    runner.backward(targets, g);
    return g;
}

// Writes loss.npy (shape ()) and grad.<parameter>.npy for every parameter, in the layout of the model's checkpoint (as
// PyTorch's .grad); returns the manifest's entries.
nlohmann::json writeGradients(
    const std::filesystem::path &out, const Model &model, const Gradients &g, const std::vector<int> &targets)
{
    writeNpy((out / "loss.npy").string(), Tensor(Shape {}, g.loss));
    nlohmann::json grads = nlohmann::json::array();
    for (const auto &[name, t] : gradientsAsStored(model, g)) {
        writeNpy((out / (names::gradientOf(name) + ".npy")).string(), t);
        grads.push_back({{"name", names::gradientOf(name)}, {"parameter", name}, {"shape", t.shape()}});
    }
    return {{"targets", targets},
        {"loss", {{"name", "loss"}, {"value", g.loss}, {"formula", "mean over counted positions of −log p(target)"}}},
        {"gradients", grads}};
}

std::string topTokens(const std::vector<float> &probs, const Tokenizer &tokenizer, int count)
{
    std::string text;
    for (const auto &[id, p] : mostProbable(probs.data(), int(probs.size()), count)) {
        char percent[32];
        std::snprintf(percent, sizeof percent, " %.1f%%", 100.0 * p);
        text += (text.empty() ? "" : ",  ")
            + nlohmann::json(tokenizer.decode({id})).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
            + percent;
    }
    return text;
}

// What switching the heads off changed: the next token after the last position and, for a model with a task, the
// held-out scores (analysis/headimportance.h).
void printAblationEffect(const ModelAndInput &run)
{
    const HeadAblation &a = run.input.ablation;
    Input whole = run.input;
    whole.ablation = {};
    const AblationComparison c = compareAblation(run.model, whole, int(run.input.tokens.size()) - 1, a);
    std::vector<HeadRef> heads;
    for (const HeadAblation::Head &h : a.heads)
        heads.push_back({h.layer, h.head});
    std::cout << "heads switched off (" << ablationModeName(a.mode) << "): " << headListText(heads) << "\n"
              << "next token, whole model:  " << topTokens(c.before, *run.tokenizer, 5) << "\n"
              << "next token, heads off:    " << topTokens(c.after, *run.tokenizer, 5) << "\n";
    if (c.scored) {
        char line[256];
        std::snprintf(line, sizeof line,
            "held-out %s (256 examples): loss %.4f -> %.4f, token accuracy %.1f%% -> %.1f%%, exact match %.1f%% -> "
            "%.1f%%\n",
            run.model->config.task.c_str(), c.baseline.loss, c.ablated.loss, 100 * c.baseline.tokenAccuracy,
            100 * c.ablated.tokenAccuracy, 100 * c.baseline.exactMatch, 100 * c.ablated.exactMatch);
        std::cout << line;
    }
}

// --objective next|mlm|span|prefix|nsp --seed S: the objective applied to the input, with the model's special tokens;
// checked before anything runs (a model without [MASK] cannot take mlm, one without sentinels not span).
// An encoder-decoder's span corruption corrupts its source (objectiveText).
CorruptedText objectiveArgument(const Arguments &args, const Model &model, const Input &input)
{
    const Objective objective = parseObjective(args.value("objective"), "--objective");
    const std::vector<int> tokens = objectiveText(model.config, objective, input.tokens, input.source);
    try {
        return applyObjective(
            model, tokens, objective, uint64_t(args.intValue("seed", 0, 0, std::numeric_limits<int>::max())));
    } catch (const Error &e) {
        throw Error(std::string("--objective ") + objectiveName(objective) + ": " + e.what());
    }
}

// objective.input [T_in], objective.targets [T_out] (−1: nothing), objective.loss_mask [T_out] and the attention
// mask the objective implies, objective.attention_mask [T_in, T_in]; returns the manifest's entry.
// --logit-lens [--lens-top-k K] [--lens-full]: the residual stream after each block read through the output head
// (analysis/logitlens.h): lens.top_ids and lens.top_probs [rows, T, K], lens.entropy [rows, T], and with --lens-full
// every row's logits as lens.{row}.logits [T, V] (row 0 the embedding, row L the model's own logits).
nlohmann::json writeLogitLens(
    const std::filesystem::path &out, const Model &model, const Engine &engine, int topK, bool full)
{
    LogitLensOptions options;
    options.topK = topK;
    if (full)
        options.onLogits = [&out](int row, const Tensor &logits) {
            writeNpy((out / ("lens." + std::to_string(row) + ".logits.npy")).string(), logits);
        };
    const LogitLens lens = logitLens(model, engine.program(), engine.trace(), engine.input(), options);
    const int64_t rows = lens.rows(), T = lens.tokens, K = lens.topK;
    Tensor ids({rows, T, K}), probs({rows, T, K}), entropy({rows, T});
    std::transform(lens.topIds.begin(), lens.topIds.end(), ids.data(), [](int id) { return float(id); });
    std::copy(lens.topProbs.begin(), lens.topProbs.end(), probs.data());
    std::copy(lens.entropy.begin(), lens.entropy.end(), entropy.data());
    writeNpy((out / "lens.top_ids.npy").string(), ids);
    writeNpy((out / "lens.top_probs.npy").string(), probs);
    writeNpy((out / "lens.entropy.npy").string(), entropy);
    return {{"streams", lens.streams}, {"blocks", lens.blocks}, {"top_k", lens.topK}, {"full", full},
        {"definition",
            "row i: the output head (the program's own operations after the last block) applied to the "
            "residual stream after i blocks; row 0 reads the embedding, the last row is the model's logits"}};
}

// --early-exit: each block's lens prediction scored by the exit rules (analysis/earlyexit.h), as the view draws it.
nlohmann::json earlyExitJson(const Model &model, const Engine &engine)
{
    LogitLensOptions options;
    options.topK = 1;
    const LogitLens lens = logitLens(model, engine.program(), engine.trace(), engine.input(), options);
    const EarlyExit e = earlyExit(lens, model.config, engine.input().tokens);
    const auto points = [](const std::vector<EarlyExitPoint> &curve, const char *setting) {
        nlohmann::json out = nlohmann::json::array();
        for (const EarlyExitPoint &p : curve)
            out.push_back({{setting, p.setting}, {"mean_blocks", p.meanLayers}, {"agreement", p.agreement},
                {"accuracy", p.accuracy >= 0 ? nlohmann::json(p.accuracy) : nlohmann::json()}});
        return out;
    };
    return {{"blocks", e.layers},
        {"full_accuracy", e.fullAccuracy >= 0 ? nlohmann::json(e.fullAccuracy) : nlohmann::json()},
        {"confidence", points(e.confidenceCurve, "threshold")}, {"patience", points(e.patienceCurve, "patience")},
        {"definition",
            "each block's prediction is the logit lens's argmax; confidence stops a token after the first block whose "
            "top probability >= threshold, patience (PABEE) once the prediction stayed unchanged that many times in a "
            "row; accuracy: the exit prediction against the next input token (null for a model that is not causal), "
            "agreement: against the whole model's prediction"}};
}

nlohmann::json writeObjective(const std::filesystem::path &out, const CorruptedText &c, uint64_t seed)
{
    auto ids = [](const std::vector<int> &v) {
        Tensor t({int64_t(v.size())});
        for (size_t i = 0; i < v.size(); ++i)
            t.data()[i] = float(v[i]);
        return t;
    };
    Tensor lossMask({int64_t(c.lossMask.size())});
    std::copy(c.lossMask.begin(), c.lossMask.end(), lossMask.data());
    const int64_t T = int64_t(c.input.size());
    Tensor mask({T, T});
    const std::vector<uint8_t> allowed = objectiveAttentionMask(c);
    for (size_t i = 0; i < allowed.size(); ++i)
        mask.data()[i] = allowed[i];
    writeNpy((out / "objective.input.npy").string(), ids(c.input));
    writeNpy((out / "objective.targets.npy").string(), ids(c.targets));
    writeNpy((out / "objective.loss_mask.npy").string(), lossMask);
    writeNpy((out / "objective.attention_mask.npy").string(), mask);
    nlohmann::json j
        = {{"name", objectiveName(c.objective)}, {"seed", seed}, {"input", c.input}, {"targets", c.targets}};
    if (c.objective == Objective::PrefixLm)
        j["prefix"] = c.prefix;
    if (c.objective == Objective::NextSentence) {
        writeNpy((out / "objective.segments.npy").string(), ids(c.segments));
        j["is_next"] = c.isNext;
        j["sentence_a"] = {c.sentenceA.first, c.sentenceA.second};
        j["sentence_b"] = {c.sentenceB.first, c.sentenceB.second};
    }
    if (c.objective == Objective::SpanCorruption)
        for (auto [begin, end] : c.spans)
            j["spans"].push_back({begin, end});
    if (c.objective == Objective::MaskedLm) {
        int masked = 0, random = 0, unchanged = 0;
        for (CorruptedText::Fate f : c.fates) {
            masked += f == CorruptedText::Fate::Masked;
            random += f == CorruptedText::Fate::Random;
            unchanged += f == CorruptedText::Fate::Unchanged;
        }
        j["chosen"] = masked + random + unchanged;
        j["masked"] = masked;
        j["random"] = random;
        j["unchanged"] = unchanged;
    }
    return j;
}

} // namespace

int dumpCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "dump");
    const std::string out = args.required("out");
    if (args.flag("grads") != args.has("targets"))
        throw Error("--grads and --targets go together: --targets gives one id (or -1) per input token");
    for (const char *option : {"memory-strategy", "checkpoint-every", "ffn-chunks"})
        if (args.has(option) && !args.flag("grads"))
            throw Error(std::string("--") + option + " applies to the gradients: give it with --targets … --grads");
    ModelAndInput run = loadModelAndInput(args);
    if (args.has("positions")) // the same weights with another encoding (model/model.h, withPositions)
        run.model = std::make_shared<const Model>(
            run.model->withPositions(positionKindArgument(args.value("positions"), "--positions"), "--positions"));
    if (args.has("capacity-factor") || args.has("expert-top-k")) // the same experts routed otherwise (withRouting)
        run.model = std::make_shared<const Model>(run.model->withRouting(args.doubleValue("capacity-factor", 0.0),
            args.intValue("expert-top-k", 0), args.has("capacity-factor") ? "--capacity-factor" : "--expert-top-k"));
    run.input.attention = attentionArgument(args, run.model->config.layers);
    if (args.has("ablate-heads") && args.flag("grads"))
        throw Error("--grads of a run with heads switched off is not implemented: drop --ablate-heads");
    run.input.ablation = ablationArgument(args, run.model, run.input.tokens);
    if (args.has("token-retention")) { // PoWER-BERT: the input's [MASK] and [CLS] protected
        if (args.flag("grads"))
            throw Error("--grads of a run with tokens eliminated is not implemented: drop --token-retention "
                        "(train --token-retention trains with it)");
        run.input.retention.keep
            = parseRetentionSchedule(args.value("token-retention"), run.model->config.layers, "--token-retention");
        run.input.retention.protect = protectedPositions(run.model->config, run.input.tokens);
    }
    if (!run.input.attention.empty() && args.flag("grads"))
        throw Error("--grads needs exact attention: backpropagation through the efficient kernels is not implemented");
    std::vector<int> targets;
    if (args.flag("grads")) {
        targets = parseTargets(args.value("targets"));
        if (targets.size() != run.input.tokens.size())
            throw Error("--targets: " + std::to_string(targets.size()) + " ids for "
                + std::to_string(run.input.tokens.size())
                + " input tokens (give one per input token, -1 to leave a position out of the loss)");
    }
    if ((args.has("lens-top-k") || args.flag("lens-full")) && !args.flag("logit-lens"))
        throw Error(std::string("--") + (args.flag("lens-full") ? "lens-full" : "lens-top-k")
            + " says what the logit lens writes: give it with --logit-lens");
    if (args.has("seed") && !args.has("objective"))
        throw Error("--seed draws an objective's corruption: give it with --objective mlm|span|prefix");
    std::optional<CorruptedText> objective;
    if (args.has("objective"))
        objective = objectiveArgument(args, *run.model, run.input);
    // Written whole or not at all: into a fresh directory that replaces --out at the end (io/stageddirectory.h).
    // An interrupted or failed dump (a full disk) leaves the previous dump as it was.
    StagedDirectory staged(out, "dump");
    const std::string dir = staged.path();
    if (args.has("heads") && run.model->config.isEncoderDecoder())
        throw Error("--heads writes a one-stack model's self-attention; an encoder–decoder's are in the dump whole");
    const std::vector<HeadRef> heads
        = parseHeadList(args.value("heads", ""), run.model->config.layers, run.model->config.heads, "--heads");
    Engine engine(run.model, run.input, traceOptionsArgument(args));
    engine.runToEnd();

    nlohmann::json manifest = {{"model", run.model->name}, {"positions", positionKindName(run.model->config.positions)},
        {"tokens", run.input.tokens}, {"padding", run.input.padding},
        {"architecture", architectureName(run.model->config.architecture())}};
    nlohmann::json pieces = nlohmann::json::array(); // each token as its tokenizer shows it ("␣the", "##ing", "<0x0A>")
    for (int id : run.input.tokens)
        pieces.push_back(run.tokenizer->piece(id));
    manifest["pieces"] = std::move(pieces);
    if (run.model->config.isEncoderDecoder())
        manifest.update({{"source", run.input.source}, {"source_padding", run.input.sourcePadding}});
    if (run.model->config.hasExperts())
        manifest.update(
            {{"capacity_factor", run.model->config.capacityFactor}, {"expert_top_k", run.model->config.expertTopK}});
    nlohmann::json tensors = nlohmann::json::array();
    // In the program's order; a checkpointed run's freed tensors computed again a block at a time (engine/recompute.h).
    const std::vector<Op> &ops = engine.program().ops;
    for (size_t first = 0, end = 0; first < ops.size(); first = end) {
        for (end = first + 1; ops[first].layer >= 0 && end < ops.size() && ops[end].layer == ops[first].layer;)
            ++end;
        std::vector<std::string> freed;
        for (size_t i = first; i < end; ++i)
            for (const OpOutput &o : ops[i].outputs)
                if (isRecomputable(engine.program(), engine.trace(), o.name))
                    freed.push_back(o.name);
        const std::vector<Tensor> made = engine.recompute(freed);
        for (size_t i = first; i < end; ++i)
            for (const OpOutput &o : ops[i].outputs) {
                const TraceEntry *e = engine.trace().find(o.name);
                const auto again = std::ranges::find(freed, o.name);
                if (!e && again == freed.end())
                    continue;
                const Tensor &t = e ? e->tensor : made[size_t(again - freed.begin())];
                writeNpy((std::filesystem::path(dir) / (o.name + ".npy")).string(), t);
                tensors.push_back(
                    {{"name", o.name}, {"shape", t.shape()}, {"formula", o.formula}, {"op", ops[i].name}});
                if (!e)
                    tensors.back()["recomputed"] = true;
            }
    }
    const ModelConfig &config = run.model->config;
    const bool onDemand = engine.attentionTrace() == AttentionTrace::OnDemand;
    manifest["attention_trace"] = engine.blockKeeping() == BlockKeeping::Input ? "inputs"
        : engine.checkpointed()                                                ? "checkpoints"
        : onDemand                                                             ? "on demand"
                                                                               : "whole";
    std::vector<std::string> readFrom; // the scored queries and keys a run keeping block inputs only freed
    for (const HeadRef &h : heads)
        for (const std::string &name : readoutInputs(config, h.layer)) // one stack: --heads refuses two
            if (isRecomputable(engine.program(), engine.trace(), name)
                && std::ranges::find(readFrom, name) == readFrom.end())
                readFrom.push_back(name);
    putRecomputed(engine.trace(), engine.program(), readFrom, engine.recompute(readFrom));
    for (const HeadRef &h : heads) { // [T, S] each, from the whole tensor or recomputed
        const std::string name = names::layerTensor(h.layer, "attn.probs.head" + std::to_string(h.head));
        const std::unique_ptr<AttentionReadout> readout
            = AttentionReadout::find(*run.model, run.input.padding, engine.trace(), h.layer);
        const TraceEntry *whole = engine.trace().find(names::layerTensor(h.layer, "attn.probs"));
        if (!readout && !whole)
            throw Error("--heads: layer " + std::to_string(h.layer) + " keeps no attention probabilities");
        Tensor probs;
        if (readout) {
            probs = readout->head(ops::ScoreStage::Probs, h.head);
        } else {
            probs = Tensor({whole->tensor.dim(1), whole->tensor.dim(2)});
            probs.matrix() = whole->tensor.slice(h.head);
        }
        writeNpy((std::filesystem::path(dir) / (name + ".npy")).string(), probs);
        tensors.push_back({{"name", name}, {"shape", probs.shape()},
            {"formula",
                "head " + std::to_string(h.head) + "'s Aᵢⱼ"
                    + (readout ? " = exp(S′ᵢⱼ − ℓᵢ), recomputed from its queries, keys and log-sum-exp" : "")},
            {"op", "derived by dump"}});
    }
    for (const auto &[site, layers] : names::attentionSites(config.layers, config.encoderLayers))
        for (int l = 0; l < layers && !onDemand; ++l) // exact layers: the mask their −∞ cells stand for
            if (const std::string name = names::attentionTensor(site, l, "mask");
                !engine.trace().contains(name) && !config.fourier.mixes(l)) { // an FNet block has no attention
                const Tensor mask = attentionMask(engine.trace(), l, site);
                writeNpy((std::filesystem::path(dir) / (name + ".npy")).string(), mask);
                tensors.push_back({{"name", name}, {"shape", mask.shape()},
                    {"formula", attentionMaskFormula(engine.trace(), l, site)}, {"op", "derived by dump"}});
            }
    // A run kept on demand has no [T, V] tensor: its last position's logits unless others are asked for.
    if (args.has("logits-at") || onDemand)
        writeLogitsAt(dir, engine, positionsArgument(args.value("logits-at", "last"), int(run.input.tokens.size())),
            tensors, manifest);
    manifest["tensors"] = tensors;
    if (objective)
        manifest["objective"]
            = writeObjective(dir, *objective, uint64_t(args.intValue("seed", 0, 0, std::numeric_limits<int>::max())));
    if (args.flag("logit-lens")) {
        const int topK = args.intValue("lens-top-k", 5, 1, run.model->config.vocab);
        manifest["logit_lens"] = writeLogitLens(dir, *run.model, engine, topK, args.flag("lens-full"));
    }
    if (args.flag("early-exit"))
        manifest["early_exit"] = earlyExitJson(*run.model, engine);
    if (!run.input.ablation.empty()) {
        std::vector<HeadRef> heads;
        for (const HeadAblation::Head &h : run.input.ablation.heads)
            heads.push_back({h.layer, h.head});
        manifest["ablation"] = {{"mode", ablationModeName(run.input.ablation.mode)}, {"heads", headListText(heads)}};
    }
    if (!run.input.retention.empty())
        manifest["token_retention"] = {{"keep", run.input.retention.keep}, {"protect", run.input.retention.protect}};
    if (args.flag("grads")) {
        manifest.update(writeGradients(dir, engine.model(), gradientsOf(args, engine, targets), targets));
        if (args.has("memory-strategy"))
            manifest["memory_strategy"] = args.value("memory-strategy");
    }
    writeFileAtomically((std::filesystem::path(dir) / "manifest.json").string(),
        manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    staged.commit();
    std::cout << "wrote " << tensors.size() << " tensors" << (args.flag("grads") ? ", loss.npy, the gradients" : "")
              << (objective ? ", objective.input/targets/loss_mask/attention_mask" : "")
              << (args.flag("logit-lens") ? ", the logit lens" : "")
              << (args.flag("early-exit") ? ", early exit's sweeps" : "") << " and manifest.json to " << out << "\n";
    if (!run.input.ablation.empty())
        printAblationEffect(run);
    return 0;
}

} // namespace atlas
