#include "view/specrun.h"

#include "analysis/maskedfills.h"
#include "analysis/objectiveexample.h"
#include "engine/engine.h"
#include "engine/inputbuilder.h"
#include "engine/recompute.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "trace/names.h"
#include "util/commalist.h"
#include "util/error.h"
#include "util/text.h"
#include "view/comparison.h"
#include "view/viewkinds.h"

#include <algorithm>

namespace atlas {

std::shared_ptr<const Model> loadSpecModel(const ViewSpec &spec)
{
    auto model = loadModel(spec.model);
    if (spec.positions.empty())
        return model;
    auto other
        = std::make_shared<Model>(model->withPositions(positionKindArgument(spec.positions, "positions"), "positions"));
    return other;
}

Input specInput(const ViewSpec &spec, const Model &model, const Tokenizer &tokenizer, const std::string &source)
{
    Input input = makeInput(tokenizer, spec.text, spec.tokens, spec.padding);
    const bool decoderGiven = !spec.decoderText.empty() || !spec.decoderTokens.empty();
    if (!model.config.isEncoderDecoder()) {
        if (decoderGiven)
            throw Error(source + ": key '" + (spec.decoderTokens.empty() ? "decoder_text" : "decoder_tokens")
                + "': model " + model.name + " has one stack: its input is 'text' or 'tokens' alone");
        return input;
    }
    std::string decoderText = spec.decoderText;
    if (!decoderGiven && spec.tokens.empty() && spec.text == model.config.sample)
        decoderText = model.config.decoderSample;
    if (decoderText.empty() && spec.decoderTokens.empty())
        throw Error(source + ": model " + model.name + " is an encoder-decoder: 'text' is its source, and its "
            + "decoder's input is 'decoder_text' or 'decoder_tokens', which the spec does not give");
    std::vector<int> decoder = decoderInput(tokenizer, decoderText, spec.decoderTokens, model.config.decoderStart);
    input.source = std::move(input.tokens);
    input.sourcePadding = std::move(input.padding);
    input.tokens = std::move(decoder);
    input.padding.clear();
    return input;
}

names::AttentionSite attentionSiteOf(const ViewSpec &spec, const ModelConfig &model, const std::string &source)
{
    if (!model.isEncoderDecoder()) {
        if (spec.site != "self")
            throw Error(source + ": key 'site': '" + spec.site + "' is in encoder-decoder models (seq2seq-sort); "
                + "this model is " + (model.causal ? "a decoder" : "an encoder")
                + " with one stack and self-attention only: use \"self\"");
        return {};
    }
    if (spec.site == "encoder")
        return {names::kEncoderStack, false};
    return {names::kDecoderStack, spec.site == "cross"};
}

int siteLayers(const names::AttentionSite &site, const ModelConfig &model)
{
    return site.stack == names::kEncoderStack ? model.encoderLayers : model.layers;
}

names::AttentionSite viewSiteOf(const ViewSpec &spec, const ModelConfig &model, const std::string &source)
{
    const names::AttentionSite site = attentionSiteOf(spec, model, source); // checks the key for every view
    const ViewKind *kind = findViewKind(spec.view);
    if ((kind && kind->showsSites) || !model.isEncoderDecoder())
        return site;
    return {names::kDecoderStack, false};
}

std::string encoderDecoderProblem(const std::string &view, const ModelConfig &model, const std::string &modelName)
{
    const ViewKind *kind = findViewKind(view);
    if (!model.isEncoderDecoder() || (kind && kind->showsEncoderDecoder))
        return {};
    std::vector<std::string> sites, others;
    for (const ViewKind &k : viewKinds())
        if (k.showsEncoderDecoder)
            (k.showsSites ? sites : others).push_back(k.kind);
    return "the " + view + " view shows models with one stack; " + modelName + " is an encoder-decoder: its attention "
        + "is in the " + joinedCommaList(sites) + " views (key 'site': self, encoder or cross), and the "
        + joinedCommaList(others) + " views show it too";
}

Objective objectiveOf(const ViewSpec &spec, const ModelConfig &model)
{
    return spec.objective.empty() ? ownObjective(model) : parseObjective(spec.objective, "objective");
}

SpecRun runSpec(const ViewSpec &spec, size_t memoryBudget, std::shared_ptr<const Model> loaded)
{
    SpecRun run;
    run.model = loaded ? std::move(loaded) : loadSpecModel(spec);
    const auto tokenizer = tokenizerForModel(*run.model);
    run.input = specInput(spec, *run.model, *tokenizer, "view spec");
    run.site = viewSiteOf(spec, run.model->config, "view spec");
    run.model = stretchedForLength(run.model, std::max(run.input.tokens.size(), run.input.source.size()));
    run.input.attention = attentionOfSpec(spec, run.model->config.layers);
    Engine engine(run.model, run.input, {true, memoryBudget});
    engine.runTo(stepperPosition(spec, engine.program(), "view spec"));
    const std::vector<std::string> names = recomputedForSpec(spec, run.model->config, engine.program(), engine.trace());
    putRecomputed(engine.trace(), engine.program(), names, engine.recompute(names));
    run.program = std::make_shared<const Program>(engine.program());
    run.trace = std::make_shared<const Trace>(std::move(engine.trace()));
    return run;
}

SpecProblem objectiveInputProblem(const ViewSpec &spec, const Model &model, const Input &input)
{
    const Objective objective = objectiveOf(spec, model.config);
    const std::vector<int> tokens = objectiveText(model.config, objective, input.tokens, input.source);
    try {
        (void)objectiveExample(model, *tokenizerForModel(model), tokens, objective, uint64_t(spec.seed));
    } catch (const Error &e) {
        return {
            "text", std::string("the ") + objectiveName(objective) + " objective cannot take this input: " + e.what()};
    }
    return {};
}

SpecProblem fillsInputProblem(const ViewSpec &spec, const Model &model, const Input &input)
{
    const std::vector<int> &tokens = input.tokens;
    const ModelConfig &c = model.config;
    if (const std::string why = maskedFillsProblem(c, model.name); !why.empty())
        return {"model", why};
    if (!spec.objective.empty() && spec.objective != "mlm")
        return {"objective",
            "the fills view fills a masked LM's corruption (\"mlm\", drawn from 'seed') or the [MASK]s the input holds "
            "(\"\"); '"
                + spec.objective + "' hides nothing for it to fill"};
    if (spec.objective.empty() && std::find(tokens.begin(), tokens.end(), c.specialToken("[MASK]")) == tokens.end())
        return {"text",
            "the input has no [MASK] to fill: type [MASK] where a token should be hidden, or give \"objective\": "
            "\"mlm\" to draw a corruption from 'seed'"};
    return {};
}

namespace {

// The trace name of what a view needs ("" for nothing in particular).
std::string neededTensor(
    ViewNeeds needs, const ViewSpec &spec, const names::AttentionSite &site, const Program &program)
{
    switch (needs) {
    case ViewNeeds::LayerProbs:
        return names::attentionTensor(site, spec.layer, "probs");
    case ViewNeeds::LayerScores: // scores and mask before softmax, the probabilities once it has run
        return names::attentionTensor(site, spec.layer, "scores");
    case ViewNeeds::FirstLayerProbs:
        return names::attentionTensor(site, 0, "probs");
    case ViewNeeds::NextProbs: // a run kept on demand computes a position's from what ln_f reads
        return program.producerOf("next_probs") >= 0 ? "next_probs" : "ln_f";
    case ViewNeeds::SpecTensor:
        return spec.tensor;
    case ViewNeeds::Nothing:
        break;
    }
    return {};
}

// Why a view that reads attention cannot draw an FNet model's blocks that mix by a Fourier transform; empty when it
// can.
SpecProblem fourierLayerProblem(
    const ViewSpec &spec, const ViewKind *kind, const ModelConfig &c, const std::string &model)
{
    if (!kind || !c.fourier.active() || kind->drawsFourierLayers)
        return {};
    const std::string fnet
        = "mixes its tokens by a Fourier transform (FNet), with no attention; the Fourier mixing view "
          "shows its mixing";
    const std::string first = "block " + std::to_string(c.fourier.layers[0]) + " of " + model + " " + fnet;
    if (kind->needs == ViewNeeds::FirstLayerProbs || kind->readsEveryBlocksHeads)
        return {"view", "the " + kind->title + " view reads every block's attention, and " + first};
    if (compareMode(spec) == CompareMode::Heads)
        return {"compare", "comparing heads reads every block's attention, and " + first};
    if ((kind->needs == ViewNeeds::LayerProbs || kind->needs == ViewNeeds::LayerScores) && c.fourier.mixes(spec.layer))
        return {"layer", "block " + std::to_string(spec.layer) + " of " + model + " " + fnet};
    return {};
}

} // namespace

std::string drawProblem(const ViewSpec &spec, const SpecRun &run, const std::string &source)
{
    const ModelConfig &c = run.model->config;
    const int tokens = int(run.site.stack == names::kEncoderStack ? run.input.source.size() : run.input.tokens.size());
    const std::string model = "model '" + run.model->name + "'";
    const auto key
        = [&](const char *name, const std::string &what) { return source + ": key '" + name + "': " + what; };
    if (const std::string problem = encoderDecoderProblem(spec.view, c, run.model->name); !problem.empty())
        return key("view", problem);
    const int layers = siteLayers(run.site, c);
    if (spec.layer >= layers)
        return key("layer",
            "layer " + std::to_string(spec.layer) + " does not exist: " + model + " has " + std::to_string(layers)
                + (run.site.stack == names::kEncoderStack        ? " encoder layers"
                        : run.site.stack == names::kDecoderStack ? " decoder layers"
                                                                 : " layers"));
    if (spec.head >= c.heads)
        return key("head",
            "head " + std::to_string(spec.head) + " does not exist: " + model + " has " + std::to_string(c.heads)
                + " heads");
    const ViewKind *kind = findViewKind(spec.view);
    if (spec.head < 0 && !(kind && kind->everyHead))
        return key(
            "head", "-1 (every head) is for the lines and heads views; the " + spec.view + " view shows one head");
    if (spec.position >= tokens)
        return key("position",
            "position " + std::to_string(spec.position) + " is outside the input's "
                + countOf(size_t(tokens), "token"));
    if (spec.query >= tokens)
        return key("query",
            "query " + std::to_string(spec.query) + " is outside the input's " + countOf(size_t(tokens), "token"));
    if (kind && kind->checkInput)
        if (const SpecProblem problem = kind->checkInput(spec, *run.model, run.input); !problem.why.empty())
            return key(problem.key.c_str(), problem.why);
    const ViewNeeds needs = kind ? kind->needs : ViewNeeds::Nothing;
    if (const SpecProblem problem = fourierLayerProblem(spec, kind, c, model); !problem.why.empty())
        return key(problem.key.c_str(), problem.why);
    if (needs == ViewNeeds::SpecTensor && spec.tensor.empty())
        return key("tensor", "the tensor view needs a tensor name, e.g. layer.0.attn.q (docs/trace-names.md)");
    // the one tensor the view cannot draw without (an FNet block's mixing, for a view that draws it)
    const std::string tensor = c.fourier.mixes(spec.layer) && kind && kind->drawsFourierLayers
        ? names::layerTensor(spec.layer, "fourier.out")
        : neededTensor(needs, spec, run.site, *run.program);
    if (!tensor.empty() && !run.trace->contains(tensor)) {
        if (run.program->producerOf(tensor) >= 0)
            return key("op", "the view needs '" + tensor + "', which is computed after op '" + spec.op + "'");
        if (needs == ViewNeeds::SpecTensor) // other views may draw without it (a layer running an efficient kernel)
            return key("tensor",
                "the trace of " + model + " has no tensor '" + tensor + "' (docs/trace-names.md lists the names)");
    }
    return {};
}

std::vector<std::string> recomputedForSpec(
    const ViewSpec &spec, const ModelConfig &config, const Program &program, const Trace &trace)
{
    const ViewKind *kind = findViewKind(spec.view);
    if (!kind || !program.checkpointed())
        return {};
    std::vector<std::string> names;
    if (kind->needs == ViewNeeds::SpecTensor)
        names.push_back(spec.tensor);
    std::vector<std::string> asked = kind->recomputes ? kind->recomputes(spec, config) : std::vector<std::string> {};
    // What a readout of the layers shown reads (a trace that keeps only each block's input frees it)
    const bool ownAttention = !config.isEncoderDecoder(); // two stacks keep their attention whole
    if (ownAttention && (kind->needs == ViewNeeds::LayerProbs || kind->needs == ViewNeeds::LayerScores))
        std::ranges::move(
            readoutInputs(config, std::clamp(spec.layer, 0, config.layers - 1)), std::back_inserter(asked));
    // every layer's heads: the views of every head, and comparing every head of two runs
    const bool everyLayer = kind->needs == ViewNeeds::FirstLayerProbs || compareMode(spec) == CompareMode::Heads;
    for (int l = 0; ownAttention && everyLayer && l < config.layers; ++l)
        std::ranges::move(readoutInputs(config, l), std::back_inserter(asked));
    for (std::string &name : asked)
        if (std::ranges::find(names, name) == names.end())
            names.push_back(std::move(name));
    std::erase_if(names, [&](const std::string &name) { return !isRecomputable(program, trace, name); });
    return names;
}

int stepperPosition(const ViewSpec &spec, const Program &program, const std::string &source)
{
    if (spec.op.empty())
        return int(program.ops.size());
    int index = program.indexOf(spec.op);
    if (index < 0)
        index = program.producerOf(spec.op);
    if (index < 0)
        throw Error(source + ": key 'op': the program has no operation or tensor '" + spec.op
            + "' (docs/trace-names.md lists them: embed, layer.0.attn.probs, …, next_probs)");
    return index + 1;
}

std::vector<attention::AttentionKernelSpec> attentionOfSpec(const ViewSpec &spec, int layerCount)
{
    return attentionPerLayer(
        attention::parseAttentionKernelSpec(spec.attention, spec.attentionParams), spec.attentionLayers, layerCount);
}

} // namespace atlas
