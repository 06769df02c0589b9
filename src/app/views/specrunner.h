#pragma once

#include "engine/input.h"
#include "model/model.h"
#include "tokenize/tokenizer.h"
#include "view/viewspec.h"
#include "views/viewinput.h"

#include <memory>

namespace atlas {

// What drawing a spec needs: its model run to the end on its input.
struct SpecRun
{
    std::shared_ptr<const Model> model;
    Input input;
    std::shared_ptr<const Trace> trace;
    ViewInput viewInput;
};

// Loads the spec's model, encodes its input, runs the engine to the end. Throws atlas::Error.
SpecRun runSpec(const ViewSpec &spec, size_t memoryBudget = size_t(8) << 30);

// Input::attention for the spec's "attention", "attention_params" and "attention_layers" on a model of
// `layerCount` layers. Throws atlas::Error for a bad kernel, parameter or layer.
std::vector<attention::AttentionKernelSpec> attentionOfSpec(const ViewSpec &spec, int layerCount);

// Token labels and vocabulary labels for views, from the model's tokenizer.
ViewInput makeViewInput(std::shared_ptr<const Model> model, const Input &input, std::shared_ptr<const Trace> trace);

} // namespace atlas
