#pragma once

#include "model/modelconfig.h"
#include "model/parameternames.h"
#include "tensor/tensor.h"
#include "trace/names.h"

#include <vector>

// What a block holds, as data: each parameter's part, whether it is the part's weight or its bias, and its shape in
// the layout of the family's checkpoint, in the checkpoint's order. Model's load, save, random and parameters()
// (model/parameterbinding.h) and the shape-only counts read this list; a family whose block is laid out like an
// existing one's (GPT-2's Conv1D, Llama's nn.Linear, GPT-NeoX's, BERT's or T5's) adds no entry here.
namespace atlas {

struct BlockParameter
{
    BlockPart part;
    bool bias = false; // the part's bias (β for a LayerNorm), else its weight (γ for a norm)
    Shape shape;
};

// Block `layer` of `stack`: its parameters but its experts', in the order of the family's files (Model::random draws
// them in this order, which the shipped models' training depends on). T5's relative bias (BlockPart::RelativeBias, in
// block 0 of each stack) is listed here but held by the model.
std::vector<BlockParameter> blockParameters(const ModelConfig &c, const names::Stack &stack, int layer);

// Each expert of a mixture-of-experts layer: its feed-forward's parameters (Gate, Up, Down and their biases), in the
// family's order.
std::vector<BlockParameter> expertParameters(const ModelConfig &c);

// The name a block parameter is saved under: its part's name (model/parameternames.h) and ".weight" or ".bias", or the
// part's name alone for the parameters that are tensors of their own (alpha_logit, span_fraction).
std::string blockParameterName(const ModelConfig &c, const names::Stack &stack, int layer, const BlockParameter &p);

} // namespace atlas
