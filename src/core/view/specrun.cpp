#include "view/specrun.h"

#include "engine/engine.h"
#include "engine/inputbuilder.h"
#include "model/builtinmodels.h"
#include "tokenize/tokenizer.h"

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
    run.program = std::make_shared<const Program>(engine.program());
    run.trace = std::make_shared<const Trace>(std::move(engine.trace()));
    return run;
}

std::vector<attention::AttentionKernelSpec> attentionOfSpec(const ViewSpec &spec, int layerCount)
{
    return attentionPerLayer(
        attention::parseAttentionKernelSpec(spec.attention, spec.attentionParams), spec.attentionLayers, layerCount);
}

} // namespace atlas
