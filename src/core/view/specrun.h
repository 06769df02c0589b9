#pragma once

#include "engine/input.h"
#include "engine/program.h"
#include "model/model.h"
#include "trace/trace.h"
#include "view/viewspec.h"

#include <memory>
#include <vector>

namespace atlas {

// What drawing a spec needs: its model run to the end on its input, as `render`, lessons and tests draw it.
struct SpecRun
{
    std::shared_ptr<const Model> model;
    Input input;
    std::shared_ptr<const Program> program;
    std::shared_ptr<const Trace> trace;
};

// The spec's model as loaded, with the spec's "positions" applied (Model::withPositions). Throws atlas::Error.
std::shared_ptr<const Model> loadSpecModel(const ViewSpec &spec); // refuses an encoder-decoder, by name

// Loads the spec's model, encodes its input, runs the engine to the end. Throws atlas::Error.
SpecRun runSpec(const ViewSpec &spec, size_t memoryBudget = size_t(8) << 30);

// Why the spec's view cannot be drawn from `run` (a layer, head, position or query the model or input does not
// have; a tensor the view reads missing from the trace), naming the key; empty when it can. The app draws the
// message instead; `render` refuses with it. `source` names the spec ("spec.json").
std::string drawProblem(const ViewSpec &spec, const SpecRun &run, const std::string &source);

// The engine's cursor the spec asks for: after its "op" (an op's name, or a tensor's, meaning the op that writes
// it), or the end when it names none. Throws atlas::Error naming `source` and the key for an op the program does not
// have.
int stepperPosition(const ViewSpec &spec, const Program &program, const std::string &source);

// Input::attention for the spec's "attention", "attention_params" and "attention_layers" on a model of
// `layerCount` layers. Throws atlas::Error for a bad kernel, parameter or layer.
std::vector<attention::AttentionKernelSpec> attentionOfSpec(const ViewSpec &spec, int layerCount);

} // namespace atlas
