#include "view/specrun.h"

#include "engine/engine.h"
#include "engine/inputbuilder.h"
#include "model/builtinmodels.h"
#include "tokenize/tokenizer.h"
#include "trace/names.h"
#include "util/error.h"

namespace atlas {

std::shared_ptr<const Model> loadSpecModel(const ViewSpec &spec)
{
    auto model = loadModel(spec.model);
    if (model->config.isEncoderDecoder()) // the views and the Input panel know one stack so far (issue 12)
        throw Error(model->name + " is an encoder-decoder model, which the app's views do not show yet: run it on "
            + "the command line, e.g. transformer-atlas dump --model " + model->name
            + " --text SOURCE --decoder-text TARGET --out DIR (its cross-attention is dec.layer.{i}.cross.probs)");
    if (spec.positions.empty())
        return model;
    auto other
        = std::make_shared<Model>(model->withPositions(positionKindArgument(spec.positions, "positions"), "positions"));
    return other;
}

SpecRun runSpec(const ViewSpec &spec, size_t memoryBudget)
{
    SpecRun run;
    run.model = loadSpecModel(spec);
    const auto tokenizer = Tokenizer::forModel(*run.model);
    run.input = makeInput(*tokenizer, spec.text, spec.tokens, spec.padding);
    run.model = stretchedForLength(run.model, run.input.tokens.size()); // past the context: positions permitting
    run.input.attention = attentionOfSpec(spec, run.model->config.layers);
    Engine engine(run.model, run.input, {true, memoryBudget});
    engine.runTo(stepperPosition(spec, engine.program(), "view spec"));
    run.program = std::make_shared<const Program>(engine.program());
    run.trace = std::make_shared<const Trace>(std::move(engine.trace()));
    return run;
}

std::string drawProblem(const ViewSpec &spec, const SpecRun &run, const std::string &source)
{
    const ModelConfig &c = run.model->config;
    const int tokens = int(run.input.tokens.size());
    const std::string model = "model '" + run.model->name + "'";
    const auto key
        = [&](const char *name, const std::string &what) { return source + ": key '" + name + "': " + what; };
    if (spec.layer >= c.layers)
        return key("layer",
            "layer " + std::to_string(spec.layer) + " does not exist: " + model + " has " + std::to_string(c.layers)
                + " layers");
    if (spec.head >= c.heads)
        return key("head",
            "head " + std::to_string(spec.head) + " does not exist: " + model + " has " + std::to_string(c.heads)
                + " heads");
    if (spec.head < 0 && spec.view != "lines" && spec.view != "heads")
        return key("head", "-1 (every head) is for the lines view; the " + spec.view + " view shows one head");
    if (spec.position >= tokens)
        return key("position",
            "position " + std::to_string(spec.position) + " is outside the input's " + std::to_string(tokens)
                + " tokens");
    if (spec.query >= tokens)
        return key("query",
            "query " + std::to_string(spec.query) + " is outside the input's " + std::to_string(tokens) + " tokens");
    std::string tensor; // the one tensor the view cannot draw without
    if (spec.view == "tensor" && spec.tensor.empty())
        return key("tensor", "the tensor view needs a tensor name, e.g. layer.0.attn.q (docs/trace-names.md)");
    if (spec.view == "tensor")
        tensor = spec.tensor;
    else if (spec.view == "attention" || spec.view == "lines" || spec.view == "mask" || spec.view == "kernels"
        || spec.view == "lsh" || spec.view == "approximation")
        tensor = names::layerTensor(spec.layer, "attn.probs");
    else if (spec.view == "heads")
        tensor = names::layerTensor(0, "attn.probs");
    else if (spec.view == "next-token")
        tensor = "next_probs";
    if (!tensor.empty() && !run.trace->contains(tensor)) {
        if (run.program->producerOf(tensor) >= 0)
            return key("op", "the view needs '" + tensor + "', which is computed after op '" + spec.op + "'");
        if (spec.view == "tensor") // other views may draw without it (a layer running an efficient kernel)
            return key("tensor",
                "the trace of " + model + " has no tensor '" + tensor + "' (docs/trace-names.md lists the names)");
    }
    return {};
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
