#include "view/specrun.h"

#include "engine/engine.h"
#include "engine/inputbuilder.h"
#include "model/builtinmodels.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"

namespace atlas {

SpecRun runSpec(const ViewSpec &spec, size_t memoryBudget)
{
    SpecRun run;
    run.model = loadModel(spec.model);
    const auto tokenizer = Tokenizer::forModel(*run.model);
    run.input = makeInput(*tokenizer, spec.text, spec.tokens, spec.padding);
    run.input.attention = attentionOfSpec(spec, run.model->config.layers);
    Engine engine(run.model, run.input, {true, memoryBudget});
    engine.runTo(stepperPosition(spec, engine.program(), "view spec"));
    run.program = std::make_shared<const Program>(engine.program());
    run.trace = std::make_shared<const Trace>(std::move(engine.trace()));
    return run;
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
