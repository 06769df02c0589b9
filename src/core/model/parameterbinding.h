#pragma once

#include "model/blockparameters.h"
#include "model/model.h"
#include "model/parameternames.h"
#include "trace/names.h"

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

// Every parameter of block `i` of stack `s` (model/blockparameters.h's list, then its experts'): visit(name, expected
// shape, the tensor that holds it). `relativeBias` is the model's tensor that holds the stack's T5 relative bias.
template <typename Block, typename Held, typename Visit>
void forEachBlockParameter(
    Block &b, const ModelConfig &c, const names::Stack &s, int i, Held &relativeBias, Visit &visit)
{
    for (const BlockParameter &p : blockParameters(c, s, i)) {
        Held &tensor = p.part == BlockPart::RelativeBias ? relativeBias : p.bias ? b.bias(p.part) : b.weight(p.part);
        visit(blockParameterName(c, s, i, p), p.shape, tensor);
    }
    for (size_t e = 0; e < b.experts.size(); ++e)
        for (const BlockParameter &p : expertParameters(c))
            visit(expertParameter(c, i, int(e), p.part) + (p.bias ? ".bias" : ".weight"), p.shape,
                p.bias ? b.experts[e].bias(p.part) : b.experts[e].weight(p.part));
}

// BERT's embeddings, blocks and heads (BertForMaskedLM, BertForPreTraining).
template <typename ModelT, typename Visit> void forEachBertParameter(ModelT &m, Visit &visit)
{
    const ModelConfig &c = m.config;
    const int64_t D = c.dModel;
    auto name = [&](ModelPart part) { return modelParameter(c, part); };
    auto linear = [&](ModelPart part, int64_t out, int64_t in, auto &weight, auto &bias) {
        visit(name(part) + ".weight", Shape {out, in}, weight);
        visit(name(part) + ".bias", Shape {out}, bias);
    };
    visit(name(ModelPart::Embedding) + ".weight", Shape {c.vocab, D}, m.wte);
    visit(name(ModelPart::Positions) + ".weight", Shape {c.context, D}, m.wpe);
    visit(name(ModelPart::TokenTypes) + ".weight", Shape {c.tokenTypes, D}, m.wtt);
    visit(name(ModelPart::EmbeddingNorm) + ".weight", Shape {D}, m.embedLnWeight);
    visit(name(ModelPart::EmbeddingNorm) + ".bias", Shape {D}, m.embedLnBias);
    for (size_t i = 0; i < m.blocks.size(); ++i)
        forEachBlockParameter(m.blocks[i], c, names::kOnlyStack, int(i), m.relativeBias, visit);
    linear(ModelPart::MlmTransform, D, D, m.headDenseWeight, m.headDenseBias);
    visit(name(ModelPart::MlmNorm) + ".weight", Shape {D}, m.lnfWeight);
    visit(name(ModelPart::MlmNorm) + ".bias", Shape {D}, m.lnfBias);
    visit(name(ModelPart::MlmOutput) + ".bias", Shape {c.vocab}, m.outputBias);
    if (!c.nspHead)
        return;
    linear(ModelPart::Pooler, D, D, m.poolerWeight, m.poolerBias);
    linear(ModelPart::NextSentence, 2, D, m.nspWeight, m.nspBias);
}

// T5's stacks (T5ForConditionalGeneration): block i of the encoder holds layer.0 (self-attention) and layer.1 (the
// feed-forward sub-layer); of the decoder, layer.0, layer.1 (cross-attention, EncDecAttention) and layer.2. Each
// stack's block 0 holds its relative position table. nn.Linear layout, no biases, RMS layer norms.
template <typename ModelT, typename Visit> void forEachT5Parameter(ModelT &m, Visit &visit)
{
    const ModelConfig &c = m.config;
    const int64_t D = c.dModel;
    visit(modelParameter(c, ModelPart::Embedding) + ".weight", Shape {c.vocab, D}, m.wte);
    for (const bool encoder : {true, false}) {
        const names::Stack &stack = encoder ? names::kEncoderStack : names::kDecoderStack;
        auto &blocks = encoder ? m.encoderBlocks : m.blocks;
        for (size_t i = 0; i < blocks.size(); ++i)
            forEachBlockParameter(blocks[i], c, stack, int(i), encoder ? m.encoderRelativeBias : m.relativeBias, visit);
        visit(modelParameter(c, ModelPart::FinalNorm, stack) + ".weight", Shape {D},
            encoder ? m.encoderLnfWeight : m.lnfWeight);
    }
    if (!c.tiedHead)
        visit(modelParameter(c, ModelPart::OutputHead) + ".weight", Shape {c.vocab, D}, m.lmHead);
}

// Every parameter the config requires, of a model whose blocks are allocated: visit(name, expected shape, tensor). The
// one table load, save, random and parameters() read; Model::random draws its values in this order, which the
// shipped models' training commands depend on (tests/tst_model.cpp pins it).
template <typename ModelT, typename Visit> void forEachParameter(ModelT &m, Visit &&visit)
{
    const ModelConfig &c = m.config;
    const int64_t D = c.dModel;
    if (c.family == Family::Bert)
        return forEachBertParameter(m, visit);
    if (c.family == Family::T5)
        return forEachT5Parameter(m, visit);
    auto name
        = [&](ModelPart part, const names::Stack &stack = names::kOnlyStack) { return modelParameter(c, part, stack); };
    auto finalNorm = [&](const names::Stack &stack, auto &weight, auto &bias) {
        visit(name(ModelPart::FinalNorm, stack) + ".weight", Shape {D}, weight);
        if (c.family != Family::Llama) // RMSNorm there, without a bias
            visit(name(ModelPart::FinalNorm, stack) + ".bias", Shape {D}, bias);
    };
    visit(name(ModelPart::Embedding) + ".weight", Shape {c.vocab, D}, m.wte);
    if (c.positions == PositionKind::Learned)
        visit(name(ModelPart::Positions) + ".weight", Shape {c.context, D}, m.wpe);
    if (c.positions == PositionKind::T5)
        visit(name(ModelPart::RelativeBias) + ".weight", Shape {c.relativeBuckets, c.heads}, m.relativeBias);
    if (c.isEncoderDecoder()) {
        for (size_t i = 0; i < m.encoderBlocks.size(); ++i)
            forEachBlockParameter(m.encoderBlocks[i], c, names::kEncoderStack, int(i), m.relativeBias, visit);
        finalNorm(names::kEncoderStack, m.encoderLnfWeight, m.encoderLnfBias);
    }
    const names::Stack decoder = c.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack;
    for (size_t i = 0; i < m.blocks.size(); ++i)
        forEachBlockParameter(m.blocks[i], c, decoder, int(i), m.relativeBias, visit);
    finalNorm(decoder, m.lnfWeight, m.lnfBias);
    if (!c.tiedHead && c.family != Family::Gpt2)
        visit(name(ModelPart::OutputHead) + ".weight", Shape {c.vocab, D}, m.lmHead);
}

template <typename ModelT, typename Ptr> std::map<std::string, Ptr> parameterMap(ModelT &m)
{
    std::map<std::string, Ptr> out;
    forEachParameter(m, [&out](const std::string &name, const Shape &, auto &tensor) { out[name] = &tensor; });
    return out;
}

} // namespace atlas
