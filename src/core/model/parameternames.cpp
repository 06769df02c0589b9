#include "model/parameternames.h"

#include "model/configjson.h"
#include "util/error.h"

#include <array>

namespace atlas {

namespace {

using BlockNames = std::array<const char *, kBlockPartCount>;

// A block's names after its prefix, in BlockPart's order; null where the family has no such parameter.
// GPT-2's layout (Conv1D: [in, out]), which the built-in models and encoder–decoders use too.
constexpr BlockNames kGpt2Block = {"ln_1", "ln_cross_attn", "ln_2", nullptr, nullptr, nullptr, "attn.c_attn",
    "attn.c_proj", "crossattention.q_attn", nullptr, nullptr, "crossattention.c_attn", "crossattention.c_proj",
    "mlp.c_fc", "mlp.c_proj", nullptr, "mlp.router", "attn.relative_key", nullptr, "attn.alpha_logit",
    "attn.span_fraction", "attn.sort.c_fc", "attn.sort.c_proj"};
// LlamaDecoderLayer (MistralDecoderLayer, Qwen2DecoderLayer, Qwen3DecoderLayer's QK-norm; MixtralDecoderLayer's
// block_sparse_moe).
constexpr BlockNames kLlamaBlock = {"input_layernorm", nullptr, "post_attention_layernorm", "self_attn.q_proj",
    "self_attn.k_proj", "self_attn.v_proj", nullptr, "self_attn.o_proj", nullptr, nullptr, nullptr, nullptr, nullptr,
    "mlp.up_proj", "mlp.down_proj", "mlp.gate_proj", "block_sparse_moe.gate", nullptr, nullptr, nullptr, nullptr,
    nullptr, nullptr, "self_attn.q_norm", "self_attn.k_norm"};
// Qwen3MoeDecoderLayer: Qwen3's, with the router at mlp.gate (its experts: expertParameter).
constexpr BlockNames kQwen3MoeBlock = {"input_layernorm", nullptr, "post_attention_layernorm", "self_attn.q_proj",
    "self_attn.k_proj", "self_attn.v_proj", nullptr, "self_attn.o_proj", nullptr, nullptr, nullptr, nullptr, nullptr,
    nullptr, nullptr, nullptr, "mlp.gate", nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, "self_attn.q_norm",
    "self_attn.k_norm"};
// GptOssDecoderLayer: Llama's attention with a sink per head, a router with a bias (mlp.router) and the experts
// stacked in one tensor per matrix (mlp.experts.gate_up_proj, down_proj; their biases end in "_bias").
constexpr BlockNames kGptOssBlock = {"input_layernorm", nullptr, "post_attention_layernorm", "self_attn.q_proj",
    "self_attn.k_proj", "self_attn.v_proj", nullptr, "self_attn.o_proj", nullptr, nullptr, nullptr, nullptr, nullptr,
    nullptr, nullptr, nullptr, "mlp.router", nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    nullptr, nullptr, "self_attn.sinks", "mlp.experts.gate_up_proj", "mlp.experts.down_proj"};
// Olmo2DecoderLayer: Llama's names, but its post_attention_layernorm normalises the attention's output, and no norm
// comes before a sub-layer.
constexpr BlockNames kOlmo2Block = {nullptr, nullptr, nullptr, "self_attn.q_proj", "self_attn.k_proj",
    "self_attn.v_proj", nullptr, "self_attn.o_proj", nullptr, nullptr, nullptr, nullptr, nullptr, "mlp.up_proj",
    "mlp.down_proj", "mlp.gate_proj", nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, "self_attn.q_norm",
    "self_attn.k_norm", "post_attention_layernorm", "post_feedforward_layernorm"};
// Gemma2DecoderLayer: a norm before and after each sub-layer; its post_attention_layernorm normalises the attention's
// output, and pre_feedforward_layernorm is the norm before the feed-forward.
constexpr BlockNames kGemma2Block = {"input_layernorm", nullptr, "pre_feedforward_layernorm", "self_attn.q_proj",
    "self_attn.k_proj", "self_attn.v_proj", nullptr, "self_attn.o_proj", nullptr, nullptr, nullptr, nullptr, nullptr,
    "mlp.up_proj", "mlp.down_proj", "mlp.gate_proj", nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
    "self_attn.q_norm", "self_attn.k_norm", "post_attention_layernorm", "post_feedforward_layernorm"};
// Phi3DecoderLayer: Llama's names, with q, k and v fused in qkv_proj and the gate and up projections in gate_up_proj
// (the gate's rows first: blockModule picks each half).
constexpr BlockNames kPhi3Block = {"input_layernorm", nullptr, "post_attention_layernorm", nullptr, nullptr, nullptr,
    "self_attn.qkv_proj", "self_attn.o_proj", nullptr, nullptr, nullptr, nullptr, nullptr, "mlp.gate_up_proj",
    "mlp.down_proj", "mlp.gate_up_proj"};
// GPTNeoXLayer.
constexpr BlockNames kNeoXBlock = {"input_layernorm", nullptr, "post_attention_layernorm", nullptr, nullptr, nullptr,
    "attention.query_key_value", "attention.dense", nullptr, nullptr, nullptr, nullptr, nullptr, "mlp.dense_h_to_4h",
    "mlp.dense_4h_to_h", nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
// GPTNeoBlock.
constexpr BlockNames kNeoBlock = {"ln_1", nullptr, "ln_2", "attn.attention.q_proj", "attn.attention.k_proj",
    "attn.attention.v_proj", nullptr, "attn.attention.out_proj", nullptr, nullptr, nullptr, nullptr, nullptr,
    "mlp.c_fc", "mlp.c_proj", nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
// BertLayer, post-LN.
constexpr BlockNames kBertBlock = {"attention.output.LayerNorm", nullptr, "output.LayerNorm", "attention.self.query",
    "attention.self.key", "attention.self.value", nullptr, "attention.output.dense", nullptr, nullptr, nullptr, nullptr,
    nullptr, "intermediate.dense", "output.dense", nullptr, nullptr, "attention.self.distance_embedding", nullptr,
    nullptr, nullptr, nullptr, nullptr};
// T5Block's layer.0 (self-attention) and layer.1 (a decoder's EncDecAttention); the feed-forward's sub-layer,
// layer.1 in the encoder and layer.2 in the decoder, is put in front of these names by t5Parameter.
constexpr BlockNames kT5Block
    = {"0.layer_norm", "1.layer_norm", "layer_norm", "0.SelfAttention.q", "0.SelfAttention.k", "0.SelfAttention.v",
        nullptr, "0.SelfAttention.o", "1.EncDecAttention.q", "1.EncDecAttention.k", "1.EncDecAttention.v", nullptr,
        "1.EncDecAttention.o", "DenseReluDense.wi", "DenseReluDense.wo", "DenseReluDense.wi_0", nullptr, nullptr,
        "0.SelfAttention.relative_attention_bias", nullptr, nullptr, nullptr, nullptr};

// GGUF's names of a block's parts after "blk.N." (gguf-py's TENSOR_NAMES), in BlockPart's order: one per part, for
// every family llama.cpp reads.
constexpr BlockNames kGgufBlock
    = {"attn_norm", nullptr, "ffn_norm", "attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output", nullptr, nullptr,
        nullptr, nullptr, nullptr, "ffn_up", "ffn_down", "ffn_gate", "ffn_gate_inp", nullptr, nullptr, nullptr, nullptr,
        nullptr, nullptr, "attn_q_norm", "attn_k_norm", "post_attention_norm", "post_ffw_norm"};
// llama.cpp's t5 names its attention's output attn_o, and its cross-attention's parts cross_attn_*, under enc.blk.N.
// and dec.blk.N.
constexpr BlockNames kGgufT5Block = {"attn_norm", "cross_attn_norm", "ffn_norm", "attn_q", "attn_k", "attn_v", nullptr,
    "attn_o", "cross_attn_q", "cross_attn_k", "cross_attn_v", nullptr, "cross_attn_o", "ffn_up", "ffn_down", "ffn_gate",
    nullptr, nullptr, "attn_rel_b"};

const char *familyName(Family family)
{
    switch (family) {
    case Family::Llama:
        return "Llama";
    case Family::GptNeoX:
        return "GPT-NeoX";
    case Family::GptNeo:
        return "GPT-Neo";
    case Family::Bert:
        return "BERT";
    case Family::T5:
        return "T5";
    default:
        return "GPT-2";
    }
}

[[noreturn]] std::string missing(Family family, const char *what)
{
    throw Error(std::string(familyName(family)) + " files have no " + what + " parameter");
}

bool isFeedForward(BlockPart part)
{
    return part == BlockPart::NormFfn || part == BlockPart::Up || part == BlockPart::Down || part == BlockPart::Gate;
}

} // namespace

std::string modelPrefix(Family family)
{
    switch (family) {
    case Family::Llama:
        return "model.";
    case Family::GptNeoX:
        return "gpt_neox.";
    case Family::Bert:
        return "bert.";
    case Family::T5:
        return ""; // T5ForConditionalGeneration prefixes nothing
    default:
        return "transformer.";
    }
}

std::string modelParameter(const ModelConfig &c, ModelPart part, const names::Stack &stack)
{
    const Family f = c.family;
    switch (part) {
    case ModelPart::Embedding:
        return f == Family::Llama  ? "embed_tokens"
            : f == Family::GptNeoX ? "embed_in"
            : f == Family::Bert    ? "embeddings.word_embeddings"
            : f == Family::T5      ? "shared"
                                   : "wte";
    case ModelPart::Positions:
        if (f == Family::Bert)
            return "embeddings.position_embeddings";
        if (f == Family::Gpt2 || f == Family::GptNeo)
            return "wpe";
        return missing(f, "learned position");
    case ModelPart::RelativeBias:
        return f == Family::Gpt2 ? "relative_attention_bias" : missing(f, "model-wide relative bias");
    case ModelPart::FinalNorm:
        if (stack == names::kEncoderStack)
            return f == Family::T5 ? "encoder.final_layer_norm" : std::string(stack.parameters) + "ln_f";
        return f == Family::Llama  ? "norm"
            : f == Family::GptNeoX ? "final_layer_norm"
            : f == Family::T5      ? "decoder.final_layer_norm"
            : f == Family::Bert    ? missing(f, "final norm")
                                   : "ln_f";
    case ModelPart::OutputHead:
        return f == Family::GptNeoX ? "embed_out" : "lm_head";
    case ModelPart::Halting:
        return f == Family::Gpt2 ? "act.halting" : missing(f, "halting unit");
    default:
        break;
    }
    if (f != Family::Bert)
        return missing(f, "BERT head");
    switch (part) {
    case ModelPart::TokenTypes:
        return "embeddings.token_type_embeddings";
    case ModelPart::EmbeddingNorm:
        return "embeddings.LayerNorm";
    case ModelPart::MlmTransform:
        return "cls.predictions.transform.dense";
    case ModelPart::MlmNorm:
        return "cls.predictions.transform.LayerNorm";
    case ModelPart::MlmOutput:
        return "cls.predictions";
    case ModelPart::Pooler:
        return "pooler.dense";
    default:
        return "cls.seq_relationship";
    }
}

bool isNormPart(BlockPart part)
{
    switch (part) {
    case BlockPart::NormAttention:
    case BlockPart::NormCross:
    case BlockPart::NormFfn:
    case BlockPart::QNorm:
    case BlockPart::KNorm:
    case BlockPart::NormAttentionOut:
    case BlockPart::NormFfnOut:
        return true;
    default:
        return false;
    }
}

bool isNormPart(ModelPart part)
{
    return part == ModelPart::FinalNorm || part == ModelPart::EmbeddingNorm || part == ModelPart::MlmNorm;
}

std::string blockParameter(const ModelConfig &c, const names::Stack &stack, int layer, BlockPart part)
{
    const std::string i = std::to_string(layer);
    const char *name = nullptr;
    std::string prefix;
    switch (c.family) {
    case Family::Llama:
        name = (c.modelType == "olmo2"                                    ? kOlmo2Block
                : c.modelType == "phi3"                                   ? kPhi3Block
                : c.modelType == "qwen3_moe"                              ? kQwen3MoeBlock
                : c.modelType == "gpt_oss"                                ? kGptOssBlock
                : c.modelType == "gemma2" || c.modelType == "gemma3_text" ? kGemma2Block
                                                                          : kLlamaBlock)[size_t(part)];
        prefix = "layers." + i + ".";
        break;
    case Family::GptNeoX:
        name = kNeoXBlock[size_t(part)];
        prefix = "layers." + i + ".";
        break;
    case Family::GptNeo:
        name = kNeoBlock[size_t(part)];
        prefix = "h." + i + ".";
        break;
    case Family::Bert:
        name = kBertBlock[size_t(part)];
        prefix = "encoder.layer." + i + ".";
        break;
    case Family::T5: {
        const bool encoder = stack == names::kEncoderStack;
        name = part == BlockPart::Up && c.gatedFfn ? "DenseReluDense.wi_1" : kT5Block[size_t(part)];
        prefix = std::string(encoder ? "encoder" : "decoder") + ".block." + i + ".layer.";
        if (isFeedForward(part))
            prefix += encoder ? "1." : "2.";
        break;
    }
    default:
        name = kGpt2Block[size_t(part)];
        prefix = names::parameterPrefix(stack, layer);
    }
    if (!name)
        return missing(c.family, "such block");
    return prefix + name;
}

std::string expertParameter(const ModelConfig &c, int layer, int expert, BlockPart part)
{
    if (part != BlockPart::Up && part != BlockPart::Down && part != BlockPart::Gate)
        return missing(c.family, "such expert");
    if (c.modelType == "qwen3_moe") { // Qwen3MoeMLP under mlp.experts.{e}
        const char *w = part == BlockPart::Up ? "up_proj" : part == BlockPart::Down ? "down_proj" : "gate_proj";
        return "layers." + std::to_string(layer) + ".mlp.experts." + std::to_string(expert) + "." + w;
    }
    if (c.family == Family::Llama) { // Mixtral's experts: w1 the gate, w3 up, w2 down
        const char *w = part == BlockPart::Up ? "w3" : part == BlockPart::Down ? "w2" : "w1";
        return "layers." + std::to_string(layer) + ".block_sparse_moe.experts." + std::to_string(expert) + "." + w;
    }
    if (c.family != Family::Gpt2 || part == BlockPart::Gate)
        return missing(c.family, "such expert");
    return names::expertPrefix(layer, expert) + (part == BlockPart::Up ? "c_fc" : "c_proj");
}

namespace {

// The model type's GGUF architecture, or the error that it has none.
std::string requireGgufArchitecture(const ModelConfig &c)
{
    const std::string arch = ggufArchitecture(c);
    if (arch.empty())
        throw Error(std::string(familyName(c.family)) + " models have no GGUF names in this app (llama.cpp reads "
            + "llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3, olmo2, smollm3, gpt2, mpt, gptneox, gpt-oss and t5 "
              "here)");
    return arch;
}

} // namespace

std::string ggufArchitecture(const ModelConfig &c)
{
    // llama.cpp's gpt2 has a table of positions only; its gptneox is the same block (with a sequential residual) that
    // turns q and k by RoPE, so a GPT-2 layout with RoPE is written as gptneox (model/gguflayout.h)
    if (c.family == Family::Gpt2 && c.architecture() == Architecture::Decoder && c.rotatesQueriesAndKeys())
        return "gptneox";
    // and its mpt is GPT-2's block with ALiBi
    if (c.family == Family::Gpt2 && c.architecture() == Architecture::Decoder && c.positions == PositionKind::Alibi)
        return "mpt";
    return configjson::modelTypeOf(c.modelType, "the model's config").gguf;
}

std::string ggufModelParameter(const ModelConfig &c, ModelPart part, const names::Stack &stack)
{
    requireGgufArchitecture(c);
    (void)modelParameter(c, part, stack); // the family has it
    switch (part) {
    case ModelPart::Embedding:
        return "token_embd";
    case ModelPart::Positions:
        return "position_embd";
    case ModelPart::FinalNorm:
        if (c.family == Family::T5)
            return stack == names::kEncoderStack ? "enc.output_norm" : "dec.output_norm";
        return "output_norm";
    case ModelPart::OutputHead:
        return "output";
    default:
        return missing(c.family, "such GGUF");
    }
}

std::string ggufBlockParameter(const ModelConfig &c, int layer, BlockPart part, const names::Stack &stack)
{
    requireGgufArchitecture(c);
    (void)blockParameter(c, stack, layer, part); // the family has it
    if (c.family == Family::T5) {
        const char *name = kGgufT5Block[size_t(part)];
        if (!name)
            return missing(c.family, "such GGUF block");
        return std::string(stack == names::kEncoderStack ? "enc" : "dec") + ".blk." + std::to_string(layer) + "."
            + name;
    }
    // llama.cpp's gpt-oss names its pre-feed-forward norm ATTN_POST_NORM and its sinks attn_sinks; its stacked
    // experts are split per matrix (ggufmodel.cpp reads them).
    const bool gptOss = c.attentionSinks;
    const char *name = c.fusesProjections() && part == BlockPart::Gate ? "ffn_up"
        : gptOss && part == BlockPart::NormFfn                         ? "post_attention_norm"
        : gptOss && part == BlockPart::Sinks                           ? "attn_sinks"
                                                                       : kGgufBlock[size_t(part)];
    if (!name)
        return missing(c.family, "such GGUF block");
    return "blk." + std::to_string(layer) + "." + name;
}

std::string ggufExpertsParameter(const ModelConfig &c, int layer, BlockPart part)
{
    requireGgufArchitecture(c);
    (void)expertParameter(c, layer, 0, part); // the family has it
    const char *matrix = part == BlockPart::Up ? "ffn_up_exps"
        : part == BlockPart::Down              ? "ffn_down_exps"
                                               : "ffn_gate_exps";
    return "blk." + std::to_string(layer) + "." + matrix;
}

std::map<std::string, std::string> ggufParameterNames(const ModelConfig &c)
{
    requireGgufArchitecture(c);
    std::map<std::string, std::string> out;
    const auto add = [&out](const std::string &hf, const std::string &gguf) {
        for (const char *tensor : {".weight", ".bias"})
            out[hf + tensor] = gguf + tensor;
    };
    const auto tryAdd = [&](auto hf, auto gguf) { // a part the family lacks is left out
        try {
            add(hf(), gguf());
        } catch (const Error &) {
        }
    };
    for (ModelPart part : {ModelPart::Embedding, ModelPart::Positions, ModelPart::FinalNorm, ModelPart::OutputHead})
        tryAdd([&] { return modelParameter(c, part); }, [&] { return ggufModelParameter(c, part); });
    // T5's two stacks, the encoder's with its own final norm, or the one stack.
    const std::vector<std::pair<names::Stack, int>> stacks = c.family == Family::T5
        ? std::vector<std::pair<names::Stack, int>> {{names::kEncoderStack, c.encoderLayers},
            {names::kDecoderStack, c.layers}}
        : std::vector<std::pair<names::Stack, int>> {{names::kOnlyStack, c.layers}};
    for (const auto &entry : stacks) { // named, not a structured binding: clang 14's lambdas cannot capture one
        const names::Stack &stack = entry.first;
        const int layers = entry.second;
        if (stack == names::kEncoderStack)
            tryAdd([&] { return modelParameter(c, ModelPart::FinalNorm, stack); },
                [&] { return ggufModelParameter(c, ModelPart::FinalNorm, stack); });
        for (int layer = 0; layer < layers; ++layer) {
            for (size_t p = 0; p < kBlockPartCount; ++p) {
                const auto part = BlockPart(p);
                tryAdd([&] { return blockParameter(c, stack, layer, part); },
                    [&] { return ggufBlockParameter(c, layer, part, stack); });
            }
            for (int e = 0; c.isMoeLayer(layer) && e < c.experts; ++e)
                for (BlockPart part : {BlockPart::Up, BlockPart::Down, BlockPart::Gate})
                    tryAdd([&] { return expertParameter(c, layer, e, part); },
                        [&] { return ggufExpertsParameter(c, layer, part); });
        }
    }
    return out;
}

} // namespace atlas
