#include "model/parameterlist.h"

#include "model/sinkhorn.h"

namespace atlas {

namespace {

using List = std::vector<BlockParameter>;

// Adds a part's weight and, where it has one, its bias of `out` values.
void add(List &list, BlockPart part, Shape weight, bool bias = false, int64_t out = 0, bool conv1d = false)
{
    list.push_back({part, false, std::move(weight), conv1d});
    if (bias)
        list.push_back({part, true, Shape {out}});
}

// GPT-2's layout (Conv1D, stored [in, out], held [out, in]; every module with a bias, LayerNorms), which the built-in
// models and the encoder–decoders use, with the project's own parts (relative keys, entmax's α, spans, Sinkhorn's
// sorting network).
List gpt2Block(const ModelConfig &c, const names::Stack &stack, int layer)
{
    const int64_t D = c.dModel, F = c.dFF;
    List list;
    auto conv1d = [&](BlockPart part, int64_t in, int64_t out) { add(list, part, {out, in}, true, out, true); };
    auto norm = [&](BlockPart part) { add(list, part, {D}, true, D); };
    if (c.fourier.mixes(layer)) { // FNet: the Fourier transform in attention's place has no weights
        norm(BlockPart::NormAttention);
        norm(BlockPart::NormFfn);
        conv1d(BlockPart::Up, D, F);
        conv1d(BlockPart::Down, F, D);
        return list;
    }
    if (c.positions == PositionKind::Shaw)
        add(list, BlockPart::RelativeKey, {2 * int64_t(c.relativeClip) + 1, c.headDim()});
    if (c.normaliser == Normaliser::LearnedEntmax)
        add(list, BlockPart::AlphaLogit, {c.heads});
    if (c.adaptiveSpan())
        add(list, BlockPart::SpanFraction, {c.heads});
    if (c.sinkhorn.active()) {
        conv1d(BlockPart::SortFc, D, D);
        conv1d(BlockPart::SortProj, D, c.sinkhorn.blocks(c.context));
    }
    norm(BlockPart::NormAttention);
    conv1d(BlockPart::Qkv, D, 3 * D);
    conv1d(BlockPart::Out, D, D);
    if (stack == names::kDecoderStack) {
        norm(BlockPart::NormCross);
        conv1d(BlockPart::CrossQ, D, D);
        conv1d(BlockPart::CrossKv, D, 2 * D);
        conv1d(BlockPart::CrossOut, D, D);
    }
    norm(BlockPart::NormFfn);
    if (c.isMoeLayer(layer)) {
        add(list, BlockPart::Router, {c.experts, D}, false, 0, true);
    } else {
        conv1d(BlockPart::Up, D, F);
        conv1d(BlockPart::Down, F, D);
    }
    return list;
}

// Hugging Face's LlamaDecoderLayer and its kin (Mistral, Qwen2/3, Mixtral, OLMo 2, Gemma 2/3, Phi-3), nn.Linear
// layout [out, in], RMSNorms without a bias.
List llamaBlock(const ModelConfig &c, int layer)
{
    const int64_t D = c.dModel, F = c.dFF, Q = int64_t(c.heads) * c.headDim(),
                  KV = int64_t(c.kvHeadCount()) * c.headDim();
    List list;
    auto linear = [&](BlockPart part, int64_t out, int64_t in, bool bias) { add(list, part, {out, in}, bias, out); };
    // OLMo 2 normalises each sub-layer's output and nothing before it; Gemma 2 both (its "sandwich").
    const bool afterSublayer = c.layerNorm == LayerNormPlacement::AfterSublayer,
               normsOutputs = afterSublayer || c.layerNorm == LayerNormPlacement::Sandwich;
    if (!afterSublayer)
        add(list, BlockPart::NormAttention, {D});
    if (c.fusesProjections()) { // Phi-3's qkv_proj: rows [Q K V]
        linear(BlockPart::Qkv, Q + 2 * KV, D, false);
    } else {
        linear(BlockPart::Q, Q, D, c.qkvBias);
        linear(BlockPart::K, KV, D, c.qkvBias);
        linear(BlockPart::V, KV, D, c.qkvBias);
    }
    linear(BlockPart::Out, D, Q, c.outBias);
    if (c.qkNorm != QkNorm::None) { // Qwen3's q_norm and k_norm over one head's d, OLMo 2's over the projections
        const bool heads = c.qkNorm == QkNorm::Heads;
        add(list, BlockPart::QNorm, {heads ? c.headDim() : Q});
        add(list, BlockPart::KNorm, {heads ? c.headDim() : KV});
    }
    if (normsOutputs)
        add(list, BlockPart::NormAttentionOut, {D});
    if (!afterSublayer)
        add(list, BlockPart::NormFfn, {D});
    if (c.attentionSinks)
        add(list, BlockPart::Sinks, {c.heads});
    if (c.isMoeLayer(layer) && c.stacksExperts()) { // gpt-oss: the router with a bias, then every expert stacked
        add(list, BlockPart::Router, {c.experts, D}, true, c.experts);
        add(list, BlockPart::ExpertsGateUp, {c.experts, D, 2 * F}, true);
        list.back().shape = {c.experts, 2 * F};
        add(list, BlockPart::ExpertsDown, {c.experts, F, D}, true);
        list.back().shape = {c.experts, D};
        return list;
    }
    if (c.isMoeLayer(layer)) { // Mixtral's block_sparse_moe: a router (gate), then the experts
        add(list, BlockPart::Router, {c.experts, D});
        return list;
    }
    if (c.fusesProjections()) { // Phi-3's gate_up_proj, held as the Gate: the gate's rows, then up's
        add(list, BlockPart::Gate, {2 * F, D});
    } else {
        linear(BlockPart::Gate, F, D, c.mlpBias);
        linear(BlockPart::Up, F, D, c.mlpBias);
    }
    linear(BlockPart::Down, D, F, c.mlpBias);
    if (normsOutputs)
        add(list, BlockPart::NormFfnOut, {D});
    return list;
}

// GPT-NeoX's GPTNeoXLayer (a fused query_key_value) and GPT-Neo's GPTNeoBlock (q, k and v without biases).
List neoBlock(const ModelConfig &c)
{
    const int64_t D = c.dModel, F = c.dFF;
    const bool neox = c.family == Family::GptNeoX;
    List list;
    auto linear = [&](BlockPart part, int64_t out, int64_t in, bool bias) { add(list, part, {out, in}, bias, out); };
    add(list, BlockPart::NormAttention, {D}, true, D);
    if (neox) {
        linear(BlockPart::Qkv, 3 * D, D, c.qkvBias);
    } else {
        linear(BlockPart::Q, D, D, false);
        linear(BlockPart::K, D, D, false);
        linear(BlockPart::V, D, D, false);
    }
    linear(BlockPart::Out, D, D, neox ? c.outBias : true);
    add(list, BlockPart::NormFfn, {D}, true, D);
    linear(BlockPart::Up, F, D, true);
    linear(BlockPart::Down, D, F, true);
    return list;
}

// BERT's BertLayer, post-LN: attention, output.dense, LayerNorm; intermediate, output, LayerNorm.
List bertBlock(const ModelConfig &c, int layer)
{
    const int64_t D = c.dModel, F = c.dFF;
    List list;
    auto linear = [&](BlockPart part, int64_t out, int64_t in) { add(list, part, {out, in}, true, out); };
    if (c.fourier.mixes(layer)) { // FNet's block (FNetLayer): the Fourier transform has no weights
        add(list, BlockPart::NormAttention, {D}, true, D);
        linear(BlockPart::Up, F, D);
        linear(BlockPart::Down, D, F);
        add(list, BlockPart::NormFfn, {D}, true, D);
        return list;
    }
    linear(BlockPart::Q, D, D);
    linear(BlockPart::K, D, D);
    linear(BlockPart::V, D, D);
    if (c.positions == PositionKind::Shaw) // position_embedding_type relative_key
        add(list, BlockPart::RelativeKey, {2 * int64_t(c.relativeClip) + 1, c.headDim()});
    linear(BlockPart::Out, D, D);
    add(list, BlockPart::NormAttention, {D}, true, D);
    linear(BlockPart::Up, F, D);
    linear(BlockPart::Down, D, F);
    add(list, BlockPart::NormFfn, {D}, true, D);
    return list;
}

// T5's block: layer.0 (self-attention), in the decoder layer.1 (cross-attention, EncDecAttention), then the
// feed-forward sub-layer. nn.Linear layout, no biases, RMS layer norms; block 0 of each stack holds its relative
// position table.
List t5Block(const ModelConfig &c, const names::Stack &stack, int layer)
{
    const int64_t D = c.dModel, F = c.dFF, I = c.innerDim();
    List list;
    add(list, BlockPart::Q, {I, D});
    add(list, BlockPart::K, {I, D});
    add(list, BlockPart::V, {I, D});
    add(list, BlockPart::Out, {D, I});
    if (layer == 0)
        add(list, BlockPart::RelativeBias, {c.relativeBuckets, c.heads});
    add(list, BlockPart::NormAttention, {D});
    if (stack == names::kDecoderStack) {
        add(list, BlockPart::CrossQ, {I, D});
        add(list, BlockPart::CrossK, {I, D});
        add(list, BlockPart::CrossV, {I, D});
        add(list, BlockPart::CrossOut, {D, I});
        add(list, BlockPart::NormCross, {D});
    }
    if (c.gatedFfn)
        add(list, BlockPart::Gate, {F, D});
    add(list, BlockPart::Up, {F, D});
    add(list, BlockPart::Down, {D, F});
    add(list, BlockPart::NormFfn, {D});
    return list;
}

} // namespace

Tensor transposedMatrix(const Tensor &matrix)
{
    Tensor out = Tensor::uninitialized({matrix.dim(1), matrix.dim(0)});
    out.matrix() = matrix.matrix().transpose();
    return out;
}

std::vector<ModelParameter> modelParameters(const ModelConfig &c)
{
    const int64_t D = c.dModel;
    std::vector<ModelParameter> list;
    const auto add
        = [&](ModelPart part, Shape shape, bool bias = false, const names::Stack &stack = names::kOnlyStack) {
              list.push_back({ModelParameter::Kind::Parameter, part, stack, bias, std::move(shape)});
          };
    const auto blocks = [&](const names::Stack &stack) {
        list.push_back({ModelParameter::Kind::Blocks, ModelPart::Embedding, stack, false, {}});
    };
    const auto module = [&](ModelPart part, int64_t out, int64_t in) {
        add(part, {out, in});
        add(part, {out}, true);
    };
    add(ModelPart::Embedding, {c.vocab, D});
    if (c.family == Family::Bert) { // BertForMaskedLM, BertForPreTraining
        add(ModelPart::Positions, {c.context, D});
        add(ModelPart::TokenTypes, {c.tokenTypes, D});
        add(ModelPart::EmbeddingNorm, {D});
        add(ModelPart::EmbeddingNorm, {D}, true);
        blocks(names::kOnlyStack);
        module(ModelPart::MlmTransform, D, D);
        add(ModelPart::MlmNorm, {D});
        add(ModelPart::MlmNorm, {D}, true);
        add(ModelPart::MlmOutput, {c.vocab}, true);
        if (c.nspHead) {
            module(ModelPart::Pooler, D, D);
            module(ModelPart::NextSentence, 2, D);
        }
        return list;
    }
    if (c.family == Family::T5) { // T5ForConditionalGeneration: each stack's blocks, then its final norm
        for (const names::Stack &stack : {names::kEncoderStack, names::kDecoderStack}) {
            blocks(stack);
            add(ModelPart::FinalNorm, {D}, false, stack);
        }
        if (!c.tiedHead)
            add(ModelPart::OutputHead, {c.vocab, D});
        return list;
    }
    if (c.positions == PositionKind::Learned)
        add(ModelPart::Positions, {c.context, D});
    if (c.positions == PositionKind::T5)
        add(ModelPart::RelativeBias, {c.relativeBuckets, c.heads});
    const auto finalNorm = [&](const names::Stack &stack) {
        add(ModelPart::FinalNorm, {D}, false, stack);
        if (c.family != Family::Llama) // RMSNorm there, without a bias
            add(ModelPart::FinalNorm, {D}, true, stack);
    };
    if (c.isEncoderDecoder()) {
        blocks(names::kEncoderStack);
        finalNorm(names::kEncoderStack);
    }
    const names::Stack decoder = c.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack;
    blocks(decoder);
    if (c.act.enabled)
        module(ModelPart::Halting, 1, D);
    finalNorm(decoder);
    if (!c.tiedHead)
        add(ModelPart::OutputHead, {c.vocab, D});
    return list;
}

std::string modelParameterName(const ModelConfig &c, const ModelParameter &p)
{
    return modelParameter(c, p.part, p.stack) + (p.bias ? ".bias" : ".weight");
}

std::vector<BlockParameter> blockParameters(const ModelConfig &c, const names::Stack &stack, int layer)
{
    switch (c.family) {
    case Family::Bert:
        return bertBlock(c, layer);
    case Family::T5:
        return t5Block(c, stack, layer);
    case Family::Llama:
        return llamaBlock(c, layer);
    case Family::GptNeoX:
    case Family::GptNeo:
        return neoBlock(c);
    default:
        return gpt2Block(c, stack, layer);
    }
}

std::vector<BlockParameter> expertParameters(const ModelConfig &c)
{
    const int64_t D = c.dModel, F = c.dFF;
    if (!c.storesConv1d()) // Mixtral's SwiGLU expert: w1, w2, w3
        return {{BlockPart::Gate, false, {F, D}}, {BlockPart::Down, false, {D, F}}, {BlockPart::Up, false, {F, D}}};
    return {{BlockPart::Up, false, {F, D}, true}, {BlockPart::Up, true, {F}}, {BlockPart::Down, false, {D, F}, true},
        {BlockPart::Down, true, {D}}};
}

std::string blockParameterName(const ModelConfig &c, const names::Stack &stack, int layer, const BlockParameter &p)
{
    const std::string name = blockParameter(c, stack, layer, p.part);
    if (p.part == BlockPart::AlphaLogit || p.part == BlockPart::SpanFraction || p.part == BlockPart::Sinks)
        return name;
    if (p.part == BlockPart::ExpertsGateUp || p.part == BlockPart::ExpertsDown) // GptOssExperts' own tensors
        return p.bias ? name + "_bias" : name;
    return name + (p.bias ? ".bias" : ".weight");
}

} // namespace atlas
