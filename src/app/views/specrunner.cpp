#include "views/specrunner.h"

#include "engine/engine.h"
#include "engine/inputbuilder.h"
#include "model/builtinmodels.h"

namespace atlas {

SpecRun runSpec(const ViewSpec &spec, size_t memoryBudget)
{
    SpecRun run;
    run.model = loadModel(spec.model);
    const auto tokenizer = Tokenizer::forModel(*run.model);
    run.input = makeInput(*tokenizer, spec.text, spec.tokens, spec.padding);
    run.input.attention = attentionOfSpec(spec, run.model->config.layers);
    Engine engine(run.model, run.input, {true, memoryBudget});
    engine.runToEnd();
    run.trace = std::make_shared<const Trace>(std::move(engine.trace()));
    run.viewInput = makeViewInput(run.model, run.input, run.trace);
    return run;
}

std::vector<attention::AttentionKernelSpec> attentionOfSpec(const ViewSpec &spec, int layerCount)
{
    return attentionPerLayer(
        attention::parseAttentionKernelSpec(spec.attention, spec.attentionParams), spec.attentionLayers, layerCount);
}

ViewInput makeViewInput(std::shared_ptr<const Model> model, const Input &input, std::shared_ptr<const Trace> trace)
{
    std::shared_ptr<const Tokenizer> tokenizer = Tokenizer::forModel(*model);
    ViewInput v;
    v.trace = std::move(trace);
    for (int id : input.tokens)
        v.tokens << QString::fromStdString(tokenizer->piece(id));
    v.vocabLabel = [tokenizer](int id) { return QString::fromStdString(tokenizer->piece(id)); };
    v.layers = model->config.layers;
    v.heads = model->config.heads;
    v.causal = model->config.causal;
    v.padding = input.padding;
    return v;
}

} // namespace atlas
