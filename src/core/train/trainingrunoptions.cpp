#include "train/trainingrunoptions.h"

#include "model/fourierlayers.h"
#include "model/funnel.h"
#include "train/trainingsetup.h"
#include "util/boundednumber.h"
#include "util/error.h"

#include <algorithm>
#include <climits>
#include <cstdio>

namespace atlas {

namespace {

using G = TrainingRunOption::Group;
using K = TrainingRunOption::Kind;

std::string numberText(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

std::string integerText(long long value)
{
    return std::to_string(value);
}

std::string flagText(bool value)
{
    return value ? "true" : "false";
}

std::string joined(const std::vector<std::string> &names, const char *separator)
{
    std::string out;
    for (const std::string &name : names)
        out += (out.empty() ? "" : separator) + name;
    return out;
}

std::vector<TrainingRunOption> makeTable()
{
    const TrainOptions defaults;
    const TrainingRun run;
    return {
        // The run's own: the optimiser, the examples, what a step keeps.
        {.name = "steps",
            .valueName = "N",
            .help = "optimiser steps in the run (default " + integerText(defaults.steps) + ")",
            .group = G::Run,
            .low = 1,
            .high = TrainOptions::kMaxSteps,
            .setNumber = [](TrainingRun &r, double v) { r.options.steps = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.options.steps); }},
        {.name = "batch",
            .valueName = "B",
            .help = "examples a step; their gradients are averaged (default " + integerText(defaults.batch) + ")",
            .group = G::Run,
            .low = 1,
            .high = TrainOptions::kMaxBatch,
            .setNumber = [](TrainingRun &r, double v) { r.options.batch = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.options.batch); }},
        {.name = "lr",
            .valueName = "LR",
            .help = "the peak learning rate of AdamW: a linear warm-up to it, then a cosine decay to a tenth of it at "
                    "the last step (default "
                + numberText(defaults.learningRate) + "; " + numberText(TrainOptions::kFineTuningLearningRate)
                + " with from)",
            .group = G::Run,
            .kind = K::Number,
            .low = 1e-12,
            .high = 100,
            .setNumber = [](TrainingRun &r, double v) { r.options.learningRate = float(v); },
            .text = [](const TrainingRun &r) { return numberText(r.options.learningRate); }},
        {.name = "warmup",
            .valueName = "W",
            .help
            = "steps of linear warm-up to the peak learning rate (default " + integerText(defaults.warmupSteps) + ")",
            .group = G::Run,
            .low = 0,
            .high = TrainOptions::kMaxSteps,
            .setNumber = [](TrainingRun &r, double v) { r.options.warmupSteps = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.options.warmupSteps); }},
        {.name = "weight-decay",
            .valueName = "λ",
            .help = "AdamW's decoupled weight decay: each step shrinks every matrix (the embeddings included) by lr "
                    "× this fraction of itself; biases and norm gains are not decayed (default "
                + numberText(defaults.weightDecay) + ")",
            .group = G::Run,
            .kind = K::Number,
            .low = 0,
            .high = 100,
            .setNumber = [](TrainingRun &r, double v) { r.options.weightDecay = float(v); },
            .text = [](const TrainingRun &r) { return numberText(r.options.weightDecay); }},
        {.name = "seed",
            .valueName = "S",
            .help = "seeds the initial weights and the example stream: the same seed trains the same model",
            .group = G::Run,
            .low = 0,
            .high = INT_MAX,
            .setNumber = [](TrainingRun &r, double v) { r.options.seed = uint64_t(v); },
            .text = [](const TrainingRun &r) { return integerText((long long)r.options.seed); }},
        {.name = "layerdrop",
            .valueName = "P",
            .help = "LayerDrop (Fan et al. 2019): each example drops each block with this probability, the "
                    "stream passing through it unchanged, so that the model still works with blocks pruned (lesson 20)",
            .group = G::Run,
            .kind = K::Number,
            .low = 0,
            .high = TrainOptions::kMaxLayerDrop,
            .setNumber = [](TrainingRun &r, double v) { r.options.layerDrop = float(v); },
            .text = [](const TrainingRun &r) { return numberText(r.options.layerDrop); }},
        {.name = "token-retention",
            .valueName = "R",
            .help = "PoWER-BERT (lesson 22): keep this fraction of the tokens after each layer, by significance, while "
                    "training",
            .group = G::Run,
            .kind = K::Number,
            .low = 1e-6,
            .high = 1,
            .setNumber = [](TrainingRun &r, double v) { r.options.tokenRetention = float(v); },
            .text = [](const TrainingRun &r) { return numberText(r.options.tokenRetention); }},
        {.name = "description",
            .valueName = "TEXT",
            .help = "the model's description, shown by `models` and the app (default: the task's summary)",
            .group = G::Run,
            .kind = K::Text,
            .setText = [](TrainingRun &r, const std::string &v, const std::string &) { r.description = v; },
            .text = [](const TrainingRun &r) { return r.description; }},

        // The model: its starting weights, or its shape.
        {.name = "from",
            .valueName = "MODEL",
            .help = "fine-tune: start from this model's weights (a built-in model's name or a directory) instead of "
                    "random ones; its shape is the run's, and it must read the task's tokens (typos: austen-mlm; "
                    "lesson 30)",
            .kind = K::Text,
            .setText =
                [](TrainingRun &r, const std::string &v, const std::string &where) {
                    if (v.empty())
                        throw Error(where + ": name a model to start from");
                    r.from = v;
                },
            .text = [](const TrainingRun &r) { return r.from; }},
        {.name = "layers",
            .valueName = "L",
            .help = "blocks in the stack (default: the task's)",
            .low = 1,
            .high = 256,
            .setNumber = [](TrainingRun &r, double v) { r.layers = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.layers); }},
        {.name = "context",
            .valueName = "N",
            .help = "the tokens a model reads at once: the windows of the novel of chars, words and mlm are this long, "
                    "and the positions table as long (default: the task's, 128)",
            .low = 64,
            .high = 16384,
            .setNumber = [](TrainingRun &r, double v) { r.context = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.context); }},
        {.name = "heads",
            .valueName = "H",
            .help = "attention heads a block; d_model must divide by them (default: the task's)",
            .low = 1,
            .high = 1024,
            .setNumber = [](TrainingRun &r, double v) { r.heads = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.heads); }},
        {.name = "d-model",
            .valueName = "D",
            .help = "the residual stream's width; the feed-forward is 4 × as wide (the Llama layout's SwiGLU 8/3 ×)",
            .low = 1,
            .high = 65536,
            .setNumber = [](TrainingRun &r, double v) { r.dModel = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.dModel); }},
        {.name = "family",
            .valueName = "gpt2|llama|qwen3|olmo2|gemma2|smollm3|phi3|gpt_oss|bert",
            .help
            = "the layout: GPT-2's (LayerNorm before each sub-layer, GELU, learned positions; the default), "
              "Llama's (RMSNorm, rotate-half RoPE, SwiGLU, no biases, an untied head; lesson 15), Qwen3's "
              "(Llama's with QK-norm on each head), OLMo 2's (Llama's with the norms after the sub-layers and "
              "QK-norm over the projections), Gemma 2's (sandwich norms of 1 + γ, GeGLU, soft-capped scores "
              "and logits, a window of half the context on the even layers, a tied head), SmolLM3's (Llama's "
              "with every fourth layer NoPE), Phi-3's (Llama's with q, k and v in one qkv_proj, the gate and up in one "
              "gate_up_proj, and RoPE on three quarters of each head, as Phi-4-mini), gpt-oss's (Llama's with biases, "
              "a sink per head, a window of half the "
              "context on the even layers and 4 clamped-SwiGLU experts, 2 per token, in every layer) or BERT's "
              "(LayerNorm after each sub-layer, segments, exact GELU, an "
              "MLM head: a bidirectional task such as mlm)",
            .kind = K::Text,
            .setText =
                [](TrainingRun &r, const std::string &v, const std::string &where) {
                    checkTrainableFamily(v, where);
                    r.family = v == "gpt2" ? std::string() : v;
                },
            .text = [](const TrainingRun &r) { return r.family.empty() ? std::string("gpt2") : r.family; }},
        {.name = "kv-heads",
            .valueName = "N",
            .help
            = "grouped-query attention: this many K/V heads, each shared by a group of query heads (the Llama layout)",
            .low = 1,
            .high = 1024,
            .needs = "family=llama|qwen3|olmo2|gemma2|smollm3|phi3|gpt_oss",
            .setNumber = [](TrainingRun &r, double v) { r.kvHeads = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.kvHeads); }},
        {.name = "reversible",
            .help = "reversible blocks (RevNet), which rebuild each block's input from its output in the backward pass",
            .kind = K::Flag,
            .setNumber = [](TrainingRun &r, double v) { r.reversible = v != 0; },
            .text = [](const TrainingRun &r) { return flagText(r.reversible); }},
        {.name = "act",
            .help = "adaptive computation time (Graves 2016; lesson 20): a halting unit after each block decides how "
                    "many blocks each token uses, and ln_f reads their outputs weighted by its halting",
            .kind = K::Flag,
            .setNumber = [](TrainingRun &r, double v) { r.act = v != 0; },
            .text = [](const TrainingRun &r) { return flagText(r.act); }},
        {.name = "shared-blocks",
            .help = "one block's weights at every layer (the Universal Transformer's recurrence in depth, ALBERT's "
                    "sharing; lesson 20): the layers apply the same block again and again",
            .kind = K::Flag,
            .setNumber = [](TrainingRun &r, double v) { r.sharedBlocks = v != 0; },
            .text = [](const TrainingRun &r) { return flagText(r.sharedBlocks); }},
        {.name = "timestep-signal",
            .help = "the Universal Transformer's step signal: a sinusoid of the step added to every position before "
                    "each application of the shared block",
            .kind = K::Flag,
            .needs = "shared-blocks",
            .setNumber = [](TrainingRun &r, double v) { r.timestepSignal = v != 0; },
            .text = [](const TrainingRun &r) { return flagText(r.timestepSignal); }},
        {.name = "ponder-cost",
            .valueName = "τ",
            .help = "adaptive computation time's price of a block: τ · the mean ponder time N + R joins the loss "
                    "(default "
                + numberText(run.actPonderCost) + ")",
            .kind = K::Number,
            .low = 0,
            .high = 1e6,
            .needs = "act",
            .setNumber = [](TrainingRun &r, double v) { r.actPonderCost = v; },
            .text = [](const TrainingRun &r) { return numberText(r.actPonderCost); }},
        {.name = "scale-embeddings",
            .help = "multiply the token embeddings by √d_model, as Vaswani et al.",
            .kind = K::Flag,
            .setNumber = [](TrainingRun &r, double v) { r.scaleEmbeddings = v != 0; },
            .text = [](const TrainingRun &r) { return flagText(r.scaleEmbeddings); }},

        // The model: attention.
        {.name = "positions",
            .valueName = "KIND",
            .help = "how the model knows where each token is (lesson 10; docs/models.md): added to the embedding ("
                    "learned, sinusoidal), rotating queries and keys (rope, rope-half), a bias on every score (alibi, "
                    "shaw, t5) or none (default: the task's)",
            .kind = K::Text,
            .setText
            = [](TrainingRun &r, const std::string &v,
                  const std::string &where) { r.positions = positionKindName(positionKindArgument(v, where)); },
            .text = [](const TrainingRun &r) { return r.positions; }},
        {.name = "normaliser",
            .valueName = "softmax|sparsemax|entmax15|entmax",
            .help = "what turns scores into weights (lesson 19): sparsemax and entmax give exact zeros; entmax learns "
                    "an α per head (default softmax)",
            .kind = K::Text,
            .setText = [](TrainingRun &r, const std::string &v,
                           const std::string &where) { r.normaliser = normaliserName(normaliserArgument(v, where)); },
            .text = [](const TrainingRun &r) { return r.normaliser; }},
        {.name = "sinkhorn",
            .valueName = "B",
            .help
            = "Sparse Sinkhorn attention (lesson 6): blocks of this many tokens, each attending to itself and one "
              "learned, sorted block",
            .low = 1,
            .high = 4096,
            .setNumber = [](TrainingRun &r, double v) { r.sinkhornBlock = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.sinkhornBlock); }},
        {.name = "fourier",
            .valueName = "all|LAYERS",
            .help = "FNet (lesson 8): these blocks, or all, mix their tokens by a Fourier transform with no weights "
                    "where the others attend (an encoder's task such as mlm)",
            .kind = K::Text,
            .setText =
                [](TrainingRun &r, const std::string &v, const std::string &where) {
                    parseFourierLayers(v, 0, where);
                    r.fourier = v;
                },
            .text = [](const TrainingRun &r) { return r.fourier; }},
        {.name = "adaptive-span",
            .valueName = "R",
            .help = "adaptive attention span (lesson 21): each head learns how far back it reads, behind a mask ramp "
                    "this many tokens wide",
            .low = 1,
            .high = 65536,
            .setNumber = [](TrainingRun &r, double v) { r.spanRamp = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.spanRamp); }},
        {.name = "span-penalty",
            .valueName = "λ",
            .help
            = "the L1 penalty on the spans: λ · mean span per layer (default " + numberText(run.spanPenalty) + ")",
            .kind = K::Number,
            .low = 0,
            .high = 1e6,
            .needs = "adaptive-span",
            .setNumber = [](TrainingRun &r, double v) { r.spanPenalty = v; },
            .text = [](const TrainingRun &r) { return numberText(r.spanPenalty); }},
        {.name = "span-init",
            .valueName = "F",
            .help = "every span starts at this fraction of the context: 0 grows the spans from nothing (the paper's; "
                    "the default), "
                    "1 lets the penalty shrink the spans no head needs",
            .kind = K::Number,
            .low = 0,
            .high = 1,
            .needs = "adaptive-span",
            .setNumber = [](TrainingRun &r, double v) { r.spanInit = v; },
            .text = [](const TrainingRun &r) { return numberText(r.spanInit); }},

        // The model: the feed-forward and the sequence's length.
        {.name = "experts",
            .valueName = "E",
            .help = "a mixture of this many experts in each feed-forward sub-layer (lesson 11; default: dense)",
            .low = 0,
            .high = 1024,
            .setNumber = [](TrainingRun &r, double v) { r.experts = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.experts); }},
        {.name = "expert-top-k",
            .valueName = "K",
            .help = "each token goes to this many experts (Switch: 1, the default)",
            .low = 1,
            .high = 1024,
            .needs = "experts",
            .setNumber = [](TrainingRun &r, double v) { r.expertTopK = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.expertTopK); }},
        {.name = "capacity-factor",
            .valueName = "X",
            .help
            = "room for this factor × tokens / experts in each expert; the tokens beyond are dropped (default 1.25)",
            .kind = K::Number,
            .low = 1e-6,
            .high = 1024,
            .needs = "experts",
            .setNumber = [](TrainingRun &r, double v) { r.capacityFactor = v; },
            .text = [](const TrainingRun &r) { return numberText(r.capacityFactor); }},
        {.name = "funnel",
            .valueName = "G1,G2,…",
            .help = "Funnel-Transformer (lesson 22): groups of this many layers, the sequence pooled by 2 between "
                    "groups, then "
                    "full-length layers after upsampling",
            .kind = K::Text,
            .setText = [](TrainingRun &r, const std::string &v,
                           const std::string &where) { r.funnelBlocks = parseFunnelBlocks(v, where); },
            .text =
                [](const TrainingRun &r) {
                    std::vector<std::string> groups;
                    for (const int g : r.funnelBlocks)
                        groups.push_back(std::to_string(g));
                    return joined(groups, ",");
                }},
        {.name = "funnel-decoder",
            .valueName = "N",
            .help
            = "the funnel's full-length layers after upsampling (default " + integerText(run.funnelDecoderLayers) + ")",
            .low = 1,
            .high = 64,
            .needs = "funnel",
            .setNumber = [](TrainingRun &r, double v) { r.funnelDecoderLayers = int(v); },
            .text = [](const TrainingRun &r) { return integerText(r.funnelDecoderLayers); }},
    };
}

} // namespace

void checkTrainableFamily(const std::string &family, const std::string &where)
{
    static const char *const kFamilies[]
        = {"gpt2", "llama", "qwen3", "olmo2", "gemma2", "smollm3", "phi3", "gpt_oss", "bert"};
    std::string names;
    for (const char *f : kFamilies) {
        if (family == f)
            return;
        names += (names.empty() ? "" : ", ") + std::string(f);
    }
    throw Error(where + ": '" + family + "' cannot be trained here (" + names + ")");
}

const std::vector<TrainingRunOption> &trainingRunOptions()
{
    static const std::vector<TrainingRunOption> table = makeTable();
    return table;
}

const TrainingRunOption *findTrainingRunOption(const std::string &name)
{
    for (const TrainingRunOption &o : trainingRunOptions())
        if (o.name == name)
            return &o;
    return nullptr;
}

void setTrainingRunOption(TrainingRun &run, const std::string &name, const std::string &value, const std::string &where)
{
    const TrainingRunOption *o = findTrainingRunOption(name);
    if (!o)
        throw Error(where + ": not an option of a training run");
    switch (o->kind) {
    case K::Flag:
        if (!value.empty() && value != "true" && value != "false")
            throw Error(where + ": '" + value + "' is not true or false");
        return o->setNumber(run, value == "false" ? 0 : 1);
    case K::Integer:
        return o->setNumber(run, boundedInteger(value, where, int(o->low), int(o->high)));
    case K::Number:
        return o->setNumber(run, boundedNumber(value, where, o->low, o->high));
    case K::Text:
        return o->setText(run, value, where);
    }
}

bool isTrainingRunOptionSet(const TrainingRun &run, const TrainingRunOption &option)
{
    static const TrainingRun defaults;
    return option.text(run) != option.text(defaults);
}

bool neededValueAccepts(const TrainingRunOption &option, const std::string &value)
{
    const size_t eq = option.needs.find('=');
    if (eq == std::string::npos)
        return false;
    for (size_t begin = eq + 1;;) {
        const size_t end = option.needs.find('|', begin);
        if (option.needs.compare(begin, end == std::string::npos ? std::string::npos : end - begin, value) == 0)
            return true;
        if (end == std::string::npos)
            return false;
        begin = end + 1;
    }
}

void checkTrainingRunOptionsNeeded(const TrainingRun &run)
{
    for (const TrainingRunOption &needed : trainingRunOptions()) {
        std::vector<std::string> setters; // the options set that need `needed` set
        for (const TrainingRunOption &o : trainingRunOptions())
            if (o.needs == needed.name && isTrainingRunOptionSet(run, o))
                setters.push_back(o.name);
        if (!setters.empty() && !isTrainingRunOptionSet(run, needed))
            throw Error(joined(setters, " and ") + (setters.size() == 1 ? " needs " : " need ") + needed.name
                + ": give " + needed.name + (needed.valueName.empty() ? "" : " " + needed.valueName) + " too");
    }
    for (const TrainingRunOption &o : trainingRunOptions()) {
        const size_t eq = o.needs.find('=');
        if (eq == std::string::npos || !isTrainingRunOptionSet(run, o))
            continue;
        const TrainingRunOption *other = findTrainingRunOption(o.needs.substr(0, eq));
        if (neededValueAccepts(o, other->text(run)))
            continue;
        std::string values = o.needs.substr(eq + 1);
        const size_t last = values.rfind('|');
        if (last != std::string::npos) // "llama|qwen3|olmo2" → "llama, qwen3 or olmo2"
            values.replace(last, 1, " or ");
        for (size_t bar = values.find('|'); bar != std::string::npos; bar = values.find('|', bar))
            values.replace(bar, 1, ", ");
        throw Error(o.name + " needs " + other->name + " " + values + ": give " + other->name + " " + values + " too");
    }
}

} // namespace atlas
