#pragma once

#include "model/model.h"
#include "model/parameterlist.h"
#include "model/parameternames.h"
#include "trace/names.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

// Internal to the core: each family's parameters bound to the Model's tensors, the one table that Model's load, save,
// random and parameters() read (model/model.cpp). The names come from model/parameternames.h's rows.
namespace atlas {

// The family's embedding and the prefix its …ForCausalLM class adds to every other key.
inline std::pair<std::string, std::string> embeddingAndPrefix(const ModelConfig &c)
{
    return {modelParameter(c, ModelPart::Embedding) + ".weight", modelPrefix(c.family)};
}

// Every parameter of block `i` of stack `s` (model/parameterlist.h's list, then its experts'): visit(name, the shape it
// is held in, the tensor that holds it, whether the checkpoint keeps it transposed as GPT-2's Conv1D [in, out]).
// `relativeBias` is the model's tensor that holds the stack's T5 relative bias.
template <typename Block, typename Held, typename Visit>
void forEachBlockParameter(
    Block &b, const ModelConfig &c, const names::Stack &s, int i, Held &relativeBias, Visit &visit)
{
    for (const BlockParameter &p : blockParameters(c, s, i)) {
        Held &tensor = p.part == BlockPart::RelativeBias ? relativeBias : p.bias ? b.bias(p.part) : b.weight(p.part);
        visit(blockParameterName(c, s, i, p), p.shape, tensor, p.conv1d);
    }
    for (size_t e = 0; e < b.experts.size(); ++e)
        for (const BlockParameter &p : expertParameters(c))
            visit(expertParameter(c, i, int(e), p.part) + (p.bias ? ".bias" : ".weight"), p.shape,
                p.bias ? b.experts[e].bias(p.part) : b.experts[e].weight(p.part), p.conv1d);
}

// Every parameter the config requires, of a model whose blocks are allocated: visit(name, held shape, tensor, conv1d),
// in the order of model/parameterlist.h's lists. The one walk load, save, random and parameters() make; Model::random
// draws its values in this order, which the shipped models' training commands depend on (tests/tst_model.cpp pins
// it).
template <typename ModelT, typename Visit> void forEachParameter(ModelT &m, Visit &&visit)
{
    const ModelConfig &c = m.config;
    for (const ModelParameter &p : modelParameters(c)) {
        if (p.kind == ModelParameter::Kind::Parameter) {
            visit(modelParameterName(c, p), p.shape, m.tensorOf(p.part, p.stack, p.bias), false);
            continue;
        }
        const bool encoder = p.stack == names::kEncoderStack;
        auto &blocks = encoder ? m.encoderBlocks : m.blocks;
        // shared blocks (model/sharedblocks.h): block 0's parameters are every layer's
        const size_t held = c.shared.enabled ? std::min<size_t>(blocks.size(), 1) : blocks.size();
        for (size_t i = 0; i < held; ++i) // a T5 stack's relative bias is its block 0's parameter
            forEachBlockParameter(
                blocks[i], c, p.stack, int(i), encoder ? m.encoderRelativeBias : m.relativeBias, visit);
    }
}

template <typename ModelT, typename Ptr> std::map<std::string, Ptr> parameterMap(ModelT &m)
{
    std::map<std::string, Ptr> out;
    forEachParameter(m, [&out](const std::string &name, const Shape &, auto &tensor, bool) { out[name] = &tensor; });
    return out;
}

} // namespace atlas
