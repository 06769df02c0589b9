#pragma once

#include "model/modelconfig.h"
#include "model/parameternames.h"
#include "tensor/tensor.h"
#include "trace/names.h"

#include <vector>

// What a model holds, as data: its own parameters and each block's, each by its part (model/parameternames.h), weight
// or bias, with the shape the model holds it in, in the checkpoint's order. Every linear map is held as nn.Linear's
// [out, in] (y = x Wᵀ + b); GPT-2's Conv1D checkpoints keep theirs as [in, out], which load and save transpose. Model's
// load, save, random and parameters() (model/parameterbinding.h) and the shape-only counts read these lists; a family
// laid out like an existing one (GPT-2's Conv1D, Llama's nn.Linear, GPT-NeoX's, BERT's or T5's) adds no entry here.
namespace atlas {

// One step of a model's list: one of the model's own parameters, or the blocks of a stack, in their place.
struct ModelParameter
{
    enum class Kind { Parameter, Blocks } kind = Kind::Parameter;
    ModelPart part = ModelPart::Embedding; // a Parameter's
    names::Stack stack = names::kOnlyStack; // a final norm's, or the stack whose blocks come here
    bool bias = false;
    Shape shape;
};

// The model's parameters and its stacks' blocks in the order of the family's files (the order Model::random draws
// them in).
std::vector<ModelParameter> modelParameters(const ModelConfig &c);
// The name a model parameter is saved under (without the family's prefix): "ln_f.weight", "lm_head.weight".
std::string modelParameterName(const ModelConfig &c, const ModelParameter &p);

struct BlockParameter
{
    BlockPart part;
    bool bias = false; // the part's bias (β for a LayerNorm), else its weight (γ for a norm)
    Shape shape; // as held: a linear map's [out, in]
    // GPT-2's Conv1D: the checkpoint keeps the matrix as [in, out], the transpose of `shape`.
    bool conv1d = false;
};

// A held [out, in] matrix as a Conv1D checkpoint keeps it, [in, out] (and back: the transpose is its own inverse).
Tensor transposedMatrix(const Tensor &matrix);

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
