#include "modelinput.h"

#include "analysis/headimportance.h"
#include "arguments.h"
#include "engine/inputbuilder.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "util/error.h"
#include "util/workbudget.h"

#include <limits>

namespace atlas {

ModelAndInput loadModelAndInput(const Arguments &args)
{
    ModelAndInput r;
    r.model = loadModel(args.value("model", "tiny-bytes"));
    r.tokenizer = tokenizerForModel(*r.model);
    if (int(args.has("tokens")) + int(args.has("text")) + int(args.has("text-file")) != 1)
        throw Error("give the input as exactly one of --tokens 464,3290,318, --text \"...\" or --text-file FILE");
    const std::vector<int> tokens = args.has("tokens") ? parseTokenList(args.value("tokens")) : std::vector<int> {};
    if (args.has("tokens") && tokens.empty())
        throw Error("--tokens: no token ids given");
    const std::vector<int> padding = args.has("padding") ? parseTokenList(args.value("padding")) : std::vector<int> {};
    const std::string text = args.has("text-file") ? readInputText(args.value("text-file")) : args.value("text");
    r.input = makeInput(*r.tokenizer, text, tokens, padding);
    const bool decoderGiven = args.has("decoder-tokens") || args.has("decoder-text");
    if (!r.model->config.isEncoderDecoder()) {
        if (decoderGiven)
            throw Error(std::string("--") + (args.has("decoder-text") ? "decoder-text" : "decoder-tokens")
                + " is for an encoder-decoder model; " + r.model->name + " is "
                + (r.model->config.causal ? "a decoder" : "an encoder")
                + " with one stack: give its input as --text or --tokens alone");
        return r;
    }
    if (args.has("decoder-tokens") == args.has("decoder-text"))
        throw Error(r.model->name + " is an encoder-decoder: --text/--tokens give the source (the encoder's input); "
            + "give the decoder's input as exactly one of --decoder-text \"...\" or --decoder-tokens 62,97");
    const std::vector<int> decoder
        = args.has("decoder-tokens") ? parseTokenList(args.value("decoder-tokens")) : std::vector<int> {};
    if (args.has("decoder-tokens") && decoder.empty())
        throw Error("--decoder-tokens: no token ids given");
    std::vector<int> target
        = decoderInput(*r.tokenizer, args.value("decoder-text"), decoder, r.model->config.decoderStart);
    r.input.source = std::move(r.input.tokens);
    r.input.sourcePadding = std::move(r.input.padding);
    r.input.tokens = std::move(target);
    r.input.padding.clear();
    return r;
}

std::vector<attention::AttentionKernelSpec> attentionArgument(const Arguments &args, int layerCount)
{
    if (!args.has("attention")) {
        if (args.has("attention-param") || args.has("attention-layers"))
            throw Error(std::string("--") + (args.has("attention-param") ? "attention-param" : "attention-layers")
                + " needs --attention KIND");
        return {};
    }
    std::vector<int> layers;
    if (args.has("attention-layers")) {
        try {
            layers = parseTokenList(args.value("attention-layers"));
        } catch (const Error &) {
            throw Error("--attention-layers: expected layer numbers separated by commas (0,2), got '"
                + args.value("attention-layers") + "'");
        }
    }
    return attentionPerLayer(
        attention::parseAttentionKernelSpec(args.value("attention"), args.values("attention-param")), layers,
        layerCount);
}

SamplingOptions samplingArgument(const Arguments &args)
{
    SamplingOptions options;
    options.temperature = static_cast<float>(args.doubleValue("temperature", 0.0, 0.0, 1000.0));
    options.topK = args.intValue("top-k", 0, 0, 1 << 24);
    options.topP = args.doubleValue("top-p", 1.0, 1e-9, 1.0);
    options.seed = static_cast<uint64_t>(args.intValue("seed", 0, 0, std::numeric_limits<int>::max()));
    return options;
}

size_t memoryBudgetArgument(const Arguments &args)
{
    // Checked before the conversion: nan or 1e30 GiB has no size_t.
    const double gib = args.doubleValue("memory-budget", 8.0, 0.0, 1 << 20);
    if (gib <= 0)
        throw Error("option --memory-budget must be positive (GiB)");
    return static_cast<size_t>(gib * double(size_t(1) << 30));
}

EngineOptions traceOptionsArgument(const Arguments &args)
{
    EngineOptions options;
    options.memoryBudget = memoryBudgetArgument(args);
    const std::string choice = args.value("attention-trace", "auto");
    using Attention = EngineOptions::Attention;
    using Checkpoints = EngineOptions::Checkpoints;
    if (choice == "whole")
        options = {true, options.memoryBudget, Attention::Whole, Checkpoints::Never};
    else if (choice == "on-demand")
        options = {true, options.memoryBudget, Attention::OnDemand, Checkpoints::Never};
    else if (choice == "checkpoints")
        options = {true, options.memoryBudget, Attention::OnDemand, Checkpoints::Always};
    else if (choice == "inputs")
        options = {true, options.memoryBudget, Attention::OnDemand, Checkpoints::InputOnly};
    else if (choice != "auto")
        throw Error("option --attention-trace: '" + choice + "' is not auto, whole, on-demand, checkpoints or inputs");
    return options;
}

Corruption corruptionArgument(const Arguments &args, const Tokenizer &tokenizer)
{
    Corruption corruption;
    const int sources
        = int(args.has("corrupted-text")) + int(args.has("corrupted-tokens")) + int(args.has("noise-positions"));
    if (sources != 1)
        throw Error("give one corruption: --corrupted-text \"...\" or --corrupted-tokens 1,2 (as many tokens as the "
                    "input), or --noise-positions 3,4 (noise on the embedding there)");
    if (args.has("corrupted-text"))
        corruption.tokens = tokenizer.encode(args.value("corrupted-text"));
    if (args.has("corrupted-tokens"))
        corruption.tokens = parseTokenList(args.value("corrupted-tokens"));
    if (args.has("noise-positions"))
        corruption.noisePositions = parseTokenList(args.value("noise-positions"));
    corruption.noiseScale = args.doubleValue("noise-scale", 3.0, 0.0, 1e6);
    corruption.seed = uint64_t(args.intValue("seed", 0, 0));
    return corruption;
}

PatchMetric metricArgument(const Arguments &args, const Tokenizer &tokenizer, int vocab)
{
    PatchMetric metric;
    metric.target = singleToken(tokenizer, args.required("target"), vocab, "--target");
    metric.contrast = args.has("contrast") ? singleToken(tokenizer, args.value("contrast"), vocab, "--contrast") : -1;
    metric.position = args.intValue("position", -1, -1);
    return metric;
}

std::string metricName(const PatchMetric &metric, const Tokenizer &tokenizer)
{
    return metric.contrast >= 0
        ? "logit('" + tokenizer.piece(metric.target) + "') - logit('" + tokenizer.piece(metric.contrast) + "')"
        : "p('" + tokenizer.piece(metric.target) + "')";
}

void setWorkBudgetArguments(const Arguments &args)
{
    WorkBudget &budget = WorkBudget::process();
    if (args.has("work-budget")) {
        const double tflop = args.doubleValue("work-budget", 2.0, 0.0, 1e9);
        if (tflop <= 0)
            throw Error("option --work-budget must be positive (TFLOP)");
        budget.flops = tflop * 1e12;
    }
    if (args.has("memory-budget"))
        budget.bytes = double(memoryBudgetArgument(args));
}

HeadAblation ablationArgument(const Arguments &args, std::shared_ptr<const Model> model, const std::vector<int> &input)
{
    if (!args.has("ablate-heads")) {
        if (args.has("ablation"))
            throw Error("--ablation says how heads are switched off: give it with --ablate-heads 0.1,1.3");
        return {};
    }
    const auto heads
        = parseHeadList(args.value("ablate-heads"), model->config.layers, model->config.heads, "--ablate-heads");
    if (heads.empty())
        throw Error("--ablate-heads: give at least one head as layer.head, for example 0.1,1.3");
    const auto mode = parseAblationMode(args.value("ablation", "zero"), "--ablation");
    return makeHeadAblation(model, heads, mode, ablationReferences(*model, input));
}

} // namespace atlas
