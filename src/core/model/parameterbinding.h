#pragma once

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

// Every parameter of block `i` of stack `s`: visit(name, expected shape, the tensor that holds it), in the order of
// Hugging Face's GPT-2 files.
template <typename Block, typename Visit>
void forEachBlockParameter(Block &b, const ModelConfig &c, const names::Stack &s, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF;
    auto name = [&](BlockPart part) { return blockParameter(c, s, i, part); };
    auto conv1d = [&](BlockPart part, int64_t in, int64_t out, auto &weight, auto &bias) { // GPT-2's [in, out]
        visit(name(part) + ".weight", Shape {in, out}, weight);
        visit(name(part) + ".bias", Shape {out}, bias);
    };
    auto norm = [&](BlockPart part, auto &weight, auto &bias) {
        visit(name(part) + ".weight", Shape {D}, weight);
        visit(name(part) + ".bias", Shape {D}, bias);
    };
    if (c.positions == PositionKind::Shaw)
        visit(name(BlockPart::RelativeKey) + ".weight", Shape {2 * int64_t(c.relativeClip) + 1, c.headDim()},
            b.relativeKey);
    if (c.normaliser == Normaliser::LearnedEntmax)
        visit(name(BlockPart::AlphaLogit), Shape {c.heads}, b.alphaLogit);
    if (c.adaptiveSpan())
        visit(name(BlockPart::SpanFraction), Shape {c.heads}, b.spanFraction);
    if (c.sinkhorn.active()) {
        const int64_t N = c.sinkhorn.blocks(c.context);
        conv1d(BlockPart::SortFc, D, D, b.sortFcWeight, b.sortFcBias);
        conv1d(BlockPart::SortProj, D, N, b.sortProjWeight, b.sortProjBias);
    }
    norm(BlockPart::NormAttention, b.ln1Weight, b.ln1Bias);
    conv1d(BlockPart::Qkv, D, 3 * D, b.attnWeight, b.attnBias);
    conv1d(BlockPart::Out, D, D, b.attnProjWeight, b.attnProjBias);
    if (s == names::kDecoderStack) {
        norm(BlockPart::NormCross, b.lnCrossWeight, b.lnCrossBias);
        conv1d(BlockPart::CrossQ, D, D, b.crossQWeight, b.crossQBias);
        conv1d(BlockPart::CrossKv, D, 2 * D, b.crossKvWeight, b.crossKvBias);
        conv1d(BlockPart::CrossOut, D, D, b.crossProjWeight, b.crossProjBias);
    }
    norm(BlockPart::NormFfn, b.ln2Weight, b.ln2Bias);
    if (!c.isMoeLayer(i)) {
        conv1d(BlockPart::Up, D, F, b.fcWeight, b.fcBias);
        conv1d(BlockPart::Down, F, D, b.fcProjWeight, b.fcProjBias);
        return;
    }
    visit(name(BlockPart::Router) + ".weight", Shape {D, c.experts}, b.routerWeight);
    for (size_t e = 0; e < b.experts.size(); ++e) {
        const std::string up = expertParameter(c, i, int(e), BlockPart::Up),
                          down = expertParameter(c, i, int(e), BlockPart::Down);
        visit(up + ".weight", Shape {D, F}, b.experts[e].fcWeight);
        visit(up + ".bias", Shape {F}, b.experts[e].fcBias);
        visit(down + ".weight", Shape {F, D}, b.experts[e].fcProjWeight);
        visit(down + ".bias", Shape {D}, b.experts[e].fcProjBias);
    }
}

// Every parameter of block `i` of a Llama-family model (Hugging Face's LlamaDecoderLayer, MistralDecoderLayer,
// Qwen2DecoderLayer), in nn.Linear layout [out, in].
template <typename Block, typename Visit>
void forEachLlamaBlockParameter(Block &b, const ModelConfig &c, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF, Q = int64_t(c.heads) * c.headDim(),
                  KV = int64_t(c.kvHeadCount()) * c.headDim();
    auto name = [&](BlockPart part) { return blockParameter(c, names::kOnlyStack, i, part); };
    auto linear = [&](BlockPart part, int64_t out, int64_t in, bool bias, auto &weight, auto &biasTensor) {
        visit(name(part) + ".weight", Shape {out, in}, weight);
        if (bias)
            visit(name(part) + ".bias", Shape {out}, biasTensor);
    };
    // OLMo 2 normalises each sub-layer's output and nothing before it; Gemma 2 both (its "sandwich").
    const bool afterSublayer = c.layerNorm == LayerNormPlacement::AfterSublayer,
               normsOutputs = afterSublayer || c.layerNorm == LayerNormPlacement::Sandwich;
    if (!afterSublayer)
        visit(name(BlockPart::NormAttention) + ".weight", Shape {D}, b.ln1Weight);
    if (c.fusesProjections()) { // Phi-3's qkv_proj: rows [Q K V]
        linear(BlockPart::Qkv, Q + 2 * KV, D, false, b.qkvWeight, b.qkvBias);
    } else {
        linear(BlockPart::Q, Q, D, c.qkvBias, b.qWeight, b.qBias);
        linear(BlockPart::K, KV, D, c.qkvBias, b.kWeight, b.kBias);
        linear(BlockPart::V, KV, D, c.qkvBias, b.vWeight, b.vBias);
    }
    linear(BlockPart::Out, D, Q, c.outBias, b.oWeight, b.oBias);
    if (c.qkNorm != QkNorm::None) { // Qwen3's q_norm and k_norm over one head's d, OLMo 2's over the projections
        const bool heads = c.qkNorm == QkNorm::Heads;
        visit(name(BlockPart::QNorm) + ".weight", Shape {heads ? c.headDim() : Q}, b.qNormWeight);
        visit(name(BlockPart::KNorm) + ".weight", Shape {heads ? c.headDim() : KV}, b.kNormWeight);
    }
    if (normsOutputs)
        visit(name(BlockPart::NormAttentionOut) + ".weight", Shape {D}, b.attnOutNormWeight);
    if (!afterSublayer)
        visit(name(BlockPart::NormFfn) + ".weight", Shape {D}, b.ln2Weight);
    if (c.isMoeLayer(i)) { // Mixtral's block_sparse_moe: a router (gate) and SwiGLU experts
        visit(name(BlockPart::Router) + ".weight", Shape {c.experts, D}, b.routerWeight);
        for (size_t e = 0; e < b.experts.size(); ++e) {
            auto expert = [&](BlockPart part) { return expertParameter(c, i, int(e), part) + ".weight"; };
            visit(expert(BlockPart::Gate), Shape {F, D}, b.experts[e].gateWeight);
            visit(expert(BlockPart::Down), Shape {D, F}, b.experts[e].downWeight);
            visit(expert(BlockPart::Up), Shape {F, D}, b.experts[e].upWeight);
        }
        return;
    }
    if (c.fusesProjections()) { // Phi-3's gate_up_proj: the gate's rows, then up's
        visit(name(BlockPart::Gate) + ".weight", Shape {2 * F, D}, b.gateUpWeight);
    } else {
        linear(BlockPart::Gate, F, D, c.mlpBias, b.gateWeight, b.gateBias);
        linear(BlockPart::Up, F, D, c.mlpBias, b.upWeight, b.upBias);
    }
    linear(BlockPart::Down, D, F, c.mlpBias, b.downWeight, b.downBias);
    if (normsOutputs)
        visit(name(BlockPart::NormFfnOut) + ".weight", Shape {D}, b.ffnOutNormWeight);
}

// GPT-NeoX's block i (GPTNeoXLayer), and GPT-Neo's (GPTNeoBlock).
template <typename Block, typename Visit>
void forEachNeoBlockParameter(Block &b, const ModelConfig &c, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF;
    auto name = [&](BlockPart part) { return blockParameter(c, names::kOnlyStack, i, part); };
    auto linear = [&](BlockPart part, int64_t out, int64_t in, bool bias, auto &weight, auto &biasTensor) {
        visit(name(part) + ".weight", Shape {out, in}, weight);
        if (bias)
            visit(name(part) + ".bias", Shape {out}, biasTensor);
    };
    auto norm = [&](BlockPart part, auto &weight, auto &bias) {
        visit(name(part) + ".weight", Shape {D}, weight);
        visit(name(part) + ".bias", Shape {D}, bias);
    };
    norm(BlockPart::NormAttention, b.ln1Weight, b.ln1Bias);
    if (c.family == Family::GptNeoX) {
        linear(BlockPart::Qkv, 3 * D, D, c.qkvBias, b.qkvWeight, b.qkvBias);
    } else {
        linear(BlockPart::Q, D, D, false, b.qWeight, b.qBias);
        linear(BlockPart::K, D, D, false, b.kWeight, b.kBias);
        linear(BlockPart::V, D, D, false, b.vWeight, b.vBias);
    }
    linear(BlockPart::Out, D, D, c.family == Family::GptNeoX ? c.outBias : true, b.oWeight, b.oBias);
    norm(BlockPart::NormFfn, b.ln2Weight, b.ln2Bias);
    linear(BlockPart::Up, F, D, true, b.upWeight, b.upBias);
    linear(BlockPart::Down, D, F, true, b.downWeight, b.downBias);
}

// BERT's block i (BertLayer), post-LN: attention, output.dense, LayerNorm; intermediate, output, LayerNorm.
template <typename Block, typename Visit>
void forEachBertBlockParameter(Block &b, const ModelConfig &c, int i, Visit &visit)
{
    const int64_t D = c.dModel, F = c.dFF;
    auto name = [&](BlockPart part) { return blockParameter(c, names::kOnlyStack, i, part); };
    auto linear = [&](BlockPart part, int64_t out, int64_t in, auto &weight, auto &bias) {
        visit(name(part) + ".weight", Shape {out, in}, weight);
        visit(name(part) + ".bias", Shape {out}, bias);
    };
    linear(BlockPart::Q, D, D, b.qWeight, b.qBias);
    linear(BlockPart::K, D, D, b.kWeight, b.kBias);
    linear(BlockPart::V, D, D, b.vWeight, b.vBias);
    if (c.positions == PositionKind::Shaw) // position_embedding_type relative_key
        visit(name(BlockPart::RelativeKey) + ".weight", Shape {2 * int64_t(c.relativeClip) + 1, c.headDim()},
            b.relativeKey);
    auto norm = [&](BlockPart part, auto &weight, auto &bias) {
        visit(name(part) + ".weight", Shape {D}, weight);
        visit(name(part) + ".bias", Shape {D}, bias);
    };
    linear(BlockPart::Out, D, D, b.oWeight, b.oBias);
    norm(BlockPart::NormAttention, b.ln1Weight, b.ln1Bias);
    linear(BlockPart::Up, F, D, b.upWeight, b.upBias);
    linear(BlockPart::Down, D, F, b.downWeight, b.downBias);
    norm(BlockPart::NormFfn, b.ln2Weight, b.ln2Bias);
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
        forEachBertBlockParameter(m.blocks[i], c, int(i), visit);
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
    const int64_t D = c.dModel, F = c.dFF, I = c.innerDim();
    visit(modelParameter(c, ModelPart::Embedding) + ".weight", Shape {c.vocab, D}, m.wte);
    for (const bool encoder : {true, false}) {
        const names::Stack &stack = encoder ? names::kEncoderStack : names::kDecoderStack;
        auto &blocks = encoder ? m.encoderBlocks : m.blocks;
        for (size_t i = 0; i < blocks.size(); ++i) {
            auto &b = blocks[i];
            auto weight = [&](BlockPart part, const Shape &shape, auto &tensor) {
                visit(blockParameter(c, stack, int(i), part) + ".weight", shape, tensor);
            };
            weight(BlockPart::Q, Shape {I, D}, b.qWeight);
            weight(BlockPart::K, Shape {I, D}, b.kWeight);
            weight(BlockPart::V, Shape {I, D}, b.vWeight);
            weight(BlockPart::Out, Shape {D, I}, b.oWeight);
            if (i == 0)
                weight(BlockPart::RelativeBias, Shape {c.relativeBuckets, c.heads},
                    encoder ? m.encoderRelativeBias : m.relativeBias);
            weight(BlockPart::NormAttention, Shape {D}, b.ln1Weight);
            if (!encoder) {
                weight(BlockPart::CrossQ, Shape {I, D}, b.crossQWeight);
                weight(BlockPart::CrossK, Shape {I, D}, b.crossKWeight);
                weight(BlockPart::CrossV, Shape {I, D}, b.crossVWeight);
                weight(BlockPart::CrossOut, Shape {D, I}, b.crossProjWeight);
                weight(BlockPart::NormCross, Shape {D}, b.lnCrossWeight);
            }
            if (c.gatedFfn)
                weight(BlockPart::Gate, Shape {F, D}, b.gateWeight);
            weight(BlockPart::Up, Shape {F, D}, b.upWeight);
            weight(BlockPart::Down, Shape {D, F}, b.downWeight);
            weight(BlockPart::NormFfn, Shape {D}, b.ln2Weight);
        }
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
            forEachBlockParameter(m.encoderBlocks[i], c, names::kEncoderStack, int(i), visit);
        finalNorm(names::kEncoderStack, m.encoderLnfWeight, m.encoderLnfBias);
    }
    const names::Stack decoder = c.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack;
    for (size_t i = 0; i < m.blocks.size(); ++i) {
        if (c.family == Family::Llama)
            forEachLlamaBlockParameter(m.blocks[i], c, int(i), visit);
        else if (c.family == Family::GptNeoX || c.family == Family::GptNeo)
            forEachNeoBlockParameter(m.blocks[i], c, int(i), visit);
        else
            forEachBlockParameter(m.blocks[i], c, decoder, int(i), visit);
    }
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
