#include "model/modelconfig.h"

#include "io/jsonread.h"
#include "model/configjson.h"
#include "util/error.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

// The config.json of every family but GPT-2 (docs/models.md, "Families"): each reader with its family's defaults.
// ModelConfig::familyJson, which writes each layout back, is in familyjson.cpp.
namespace atlas {

using namespace configjson;

namespace {

// The shape every Hugging Face family with these key names shares: the four required keys, then the width, depth,
// heads, feed-forward width and vocabulary (with the family's default vocabulary).
ModelConfig hiddenShape(
    const json &j, Family family, const std::string &modelType, int defaultVocab, const std::string &source)
{
    requireKeys(j, {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"}, modelType, source);
    ModelConfig c;
    c.family = family;
    c.modelType = modelType;
    c.dModel = readInt(j, kHidden, 0, source);
    c.layers = readInt(j, kHiddenLayers, 0, source);
    c.heads = readInt(j, kAttentionHeads, 0, source);
    c.dFF = readInt(j, kIntermediate, 0, source);
    c.vocab = readInt(j, kVocab, defaultVocab, source);
    c.sourceKeys = {{kEmbd.key, kHidden.key}, {kLayers.key, kHiddenLayers.key}, {kHeads.key, kAttentionHeads.key},
        {kInner.key, kIntermediate.key}, {kPositions.key, kMaxPositions.key}};
    return c;
}

// The layers `layer_types` names "sliding_attention" (transformers ≥ 4.53), or false when it is absent.
bool readSlidingLayers(const json &j, const ModelConfig &c, const std::string &source, std::vector<int> &windowed)
{
    if (!j.contains("layer_types") || j["layer_types"].is_null())
        return false;
    const json &types = j["layer_types"];
    if (!types.is_array() || types.size() != size_t(c.layers))
        throw Error(source + ": key 'layer_types': expected one of \"full_attention\" or \"sliding_attention\" "
            + "for each of the " + std::to_string(c.layers) + " layers, got " + shownJson(types));
    for (size_t i = 0; i < types.size(); ++i) {
        const std::string layerType = types[i].is_string() ? types[i].get<std::string>() : std::string();
        if (layerType != "full_attention" && layerType != "sliding_attention")
            throw Error(source + ": key 'layer_types' [" + std::to_string(i) + "]: expected \"full_attention\" "
                + "or \"sliding_attention\", got " + shownJson(types[i]));
        if (layerType == "sliding_attention")
            windowed.push_back(int(i));
    }
    return true;
}

constexpr IntKey kWindow {"sliding_window", 1, 1 << 24};

// Qwen2's sliding window (Qwen2Config with use_sliding_window): the layers `layer_types` names "sliding_attention",
// else those from max_window_layers on, see the sliding_window latest keys; the others see every earlier key.
void readQwen2Window(const json &j, ModelConfig &c, const std::string &source)
{
    constexpr IntKey firstLayer {"max_window_layers", 0, 1 << 16};
    const int first = readInt(j, firstLayer, 28, source);
    std::vector<int> windowed;
    if (!readSlidingLayers(j, c, source, windowed))
        for (int i = first; i < c.layers; ++i)
            windowed.push_back(i);
    if (windowed.empty()) // max_window_layers past the last layer: every layer attends in full
        return;
    c.slidingWindow = readInt(j, kWindow, 4096, source);
    c.windowedLayers = windowed;
}

// A soft-cap key of Gemma 2: a positive number, or null for none.
float readSoftcap(const json &j, const char *key, double byDefault, const std::string &source)
{
    if (!j.contains(key))
        return float(byDefault);
    return j[key].is_null() ? 0.0f : float(jsonNumber(j, key, 1e-3, 1e6, source));
}

// Gemma 2 and 3 (Gemma2Config, Gemma3TextConfig; their decoder layers): RMSNorms that scale by 1 + γ, sandwiched
// around each sub-layer; the embedding times √hidden_size; GeGLU with the tanh GELU; scores over
// √query_pre_attn_scalar; a tied head. Gemma 2 soft-caps the scores (attn_logit_softcapping) and the logits
// (final_logit_softcapping) and has a window on every other layer (the even ones, or those `layer_types` names).
// Gemma 3 caps nothing by default, normalises q and k per head (q_norm, k_norm, also 1 + γ), has a window on five
// layers of six (sliding_window_pattern, or `layer_types`), and turns the windowed layers with rope_local_base_freq
// and no rope_scaling, the others with rope_theta (default 1e6) and rope_scaling.
void readGemma(const json &j, ModelConfig &c, const std::string &source)
{
    const bool gemma3 = c.modelType == "gemma3_text";
    const char *act = j.contains("hidden_activation") ? "hidden_activation" : "hidden_act";
    c.activation = parseActivation(readString(j, act, "gelu_pytorch_tanh", source), act, source);
    if (c.activation != Activation::GeluTanh)
        throw Error(source + ": key '" + act + "': Gemma's GeGLU takes gelu_pytorch_tanh, not '"
            + readString(j, act, "", source) + "'");
    c.qkvBias = c.outBias = readBool(j, "attention_bias", false, source);
    c.mlpBias = false;
    c.layerNorm = LayerNormPlacement::Sandwich;
    c.normAddsOne = true;
    c.embeddingScale = float(std::sqrt(double(c.dModel))); // Gemma's normalizer, in the weights' dtype
    c.queryScaleBase = j.contains("query_pre_attn_scalar")
        ? float(jsonNumber(j, "query_pre_attn_scalar", 1.0, 1e9, source))
        : 256.0f;
    c.attentionSoftcap = readSoftcap(j, "attn_logit_softcapping", gemma3 ? 0.0 : 50.0, source);
    c.logitSoftcap = readSoftcap(j, "final_logit_softcapping", gemma3 ? 0.0 : 30.0, source);
    c.tiedHead = readBool(j, "tie_word_embeddings", true, source);
    if (!j.contains("head_dim") || j["head_dim"].is_null())
        c.headWidth = 256; // Gemma2Config's and Gemma3TextConfig's default
    if (gemma3) {
        c.qkNorm = QkNorm::Heads;
        if (!j.contains("rope_theta"))
            c.ropeBase = 1e6f;
        c.ropeLocalBase = j.contains("rope_local_base_freq")
            ? float(jsonNumber(j, "rope_local_base_freq", 2.0, 1e9, source))
            : 10000.0f;
    }
    constexpr IntKey pattern {"sliding_window_pattern", 1, 1 << 16};
    const int every = gemma3 ? readInt(j, pattern, 6, source) : 2;
    std::vector<int> windowed;
    if (!readSlidingLayers(j, c, source, windowed))
        for (int i = 0; i < c.layers; ++i)
            if (gemma3 ? (i + 1) % every != 0 : i % every == 0) // Gemma 3: every sixth layer global; Gemma 2: the odd
                windowed.push_back(i);
    if (!windowed.empty() && !(j.contains("sliding_window") && j["sliding_window"].is_null())) {
        c.slidingWindow = readInt(j, kWindow, 4096, source);
        c.windowedLayers = windowed;
    }
}

// SmolLM3 (SmolLM3Config, SmolLM3Attention): Llama's block, but the layers no_rope_layers marks 0 (else every
// no_rope_layer_interval-th) do not turn q and k (NoPE); with use_sliding_window, the layers `layer_types` names
// "sliding_attention", else the NoPE ones, see the sliding_window latest keys.
void readSmolLM3(const json &j, ModelConfig &c, const std::string &source)
{
    c.qkvBias = c.outBias = readBool(j, "attention_bias", false, source);
    c.mlpBias = readBool(j, "mlp_bias", false, source);
    if (const json *flags = optionalJsonMember(j, "no_rope_layers")) {
        const JsonPlace place {source, "no_rope_layers"};
        if (!flags->is_array() || flags->size() < size_t(c.layers))
            place.fail("must hold 1 (RoPE) or 0 (no RoPE) for each of the " + std::to_string(c.layers) + " layers, is "
                + shownJson(*flags));
        for (int i = 0; i < c.layers; ++i)
            if (jsonInteger((*flags)[size_t(i)], place.at(size_t(i)), 0, 1) == 0)
                c.noRopeLayers.push_back(i);
    } else {
        constexpr IntKey interval {"no_rope_layer_interval", 1, 1 << 16};
        const int every = readInt(j, interval, 4, source);
        for (int i = 0; i < c.layers; ++i)
            if ((i + 1) % every == 0)
                c.noRopeLayers.push_back(i);
    }
    if (!readBool(j, "use_sliding_window", false, source) || !optionalJsonMember(j, "sliding_window"))
        return;
    std::vector<int> windowed;
    if (!readSlidingLayers(j, c, source, windowed))
        windowed = c.noRopeLayers;
    if (windowed.empty())
        return;
    c.slidingWindow = readInt(j, kWindow, 4096, source);
    c.windowedLayers = windowed;
}

// Phi-3, 3.5 and 4-mini (Phi3Config, Phi3Attention, Phi3MLP): Llama's block with q, k and v in one qkv_proj and the
// gate and up projections in one gate_up_proj (ModelConfig::fusesProjections), no biases; RoPE on the first
// partial_rotary_factor of each head (Phi-4-mini: 0.75), LongRoPE's rope_scaling (readLongRope), and a sliding_window,
// when it is not null, on every layer.
void readPhi3(const json &j, ModelConfig &c, const std::string &source)
{
    c.qkvBias = c.outBias = c.mlpBias = false;
    if (const json *partial = optionalJsonMember(j, "partial_rotary_factor")) {
        const JsonPlace place {source, "partial_rotary_factor"};
        const double fraction = jsonNumber(*partial, place, 1e-6, 1.0);
        const int d = c.headDim();
        c.rotaryDims = int(double(d) * fraction + 1e-9); // Phi3RotaryEmbedding: int(head_dim · factor)
        if (c.rotaryDims < 2 || c.rotaryDims % 2 != 0)
            place.fail("turns " + std::to_string(c.rotaryDims) + " of a head's " + std::to_string(d)
                + " dimensions: RoPE needs an even number, at least 2");
        if (c.rotaryDims == d)
            c.rotaryDims = 0;
    }
    if (optionalJsonMember(j, "sliding_window"))
        c.slidingWindow = readInt(j, kWindow, 0, source);
}

// gpt-oss (GptOssConfig, GptOssAttention, GptOssMLP): Llama's block with biases on q, k, v and o (attention_bias,
// true by default), a learned sink per head, a window of sliding_window keys (128) on the layers `layer_types` names
// "sliding_attention" (else the even ones), YaRN (rope_scaling; GptOssConfig's own when absent), and in every layer a
// mixture of num_local_experts experts (128), num_experts_per_tok (4) per token, routed by a router with a bias and
// gated by a softmax over the chosen logits (Mixtral's renormalised gates), each expert a clamped SwiGLU with biases:
// (clamp(up, −l, l) + 1) ⊙ gate σ(1.702 gate), gate ≤ l = swiglu_limit (7).
void readGptOss(const json &j, ModelConfig &c, const std::string &source)
{
    // The released checkpoints' experts are MXFP4 blocks (…_blocks, …_scales), decoded as they are read
    // (SafetensorsCheckpoint::mxfp4Tensor); every other tensor is BF16.
    if (const json *quantized = optionalJsonMember(j, "quantization_config"); quantized && !quantized->is_null()) {
        const JsonPlace place {source, "quantization_config"};
        if (!quantized->is_object())
            place.fail("is " + shownJson(*quantized) + ", not an object");
        const std::string method = jsonString(*quantized, "quant_method", place, "");
        if (method != "mxfp4")
            place.fail("names quant_method '" + shownText(method)
                + "': gpt-oss checkpoints are read in F32, F16, BF16 or with their experts in MXFP4 only");
    }
    c.qkvBias = c.outBias = readBool(j, "attention_bias", true, source);
    c.mlpBias = true;
    c.attentionSinks = true;
    c.activation = Activation::QuickGelu; // hidden_act is not read by GptOssExperts
    if (const json *alpha = optionalJsonMember(j, "swiglu_alpha"); alpha && !alpha->is_null()) {
        const JsonPlace place {source, "swiglu_alpha"};
        if (jsonNumber(*alpha, place, -1e6, 1e6) != 1.702)
            place.fail("is " + shownJson(*alpha) + ": the experts' gate σ(α g) is read with α = 1.702 only");
    }
    c.gluClamp = j.contains("swiglu_limit") ? float(jsonNumber(j, "swiglu_limit", 1e-3, 1e6, source)) : 7.0f;
    std::vector<int> windowed;
    if (!readSlidingLayers(j, c, source, windowed))
        for (int i = 0; i < c.layers; i += 2) // GptOssConfig: "sliding_attention" where (i + 1) % 2
            windowed.push_back(i);
    if (!windowed.empty() && !(j.contains("sliding_window") && j["sliding_window"].is_null())) {
        c.slidingWindow = readInt(j, kWindow, 128, source);
        c.windowedLayers = windowed;
    }
}

// Llama, Mistral, Qwen2, Qwen3, OLMo 2, Gemma 2 and 3, SmolLM3 and Phi-3 (transformers' LlamaConfig, MistralConfig,
// Qwen2Config, Qwen3Config, Olmo2Config, Gemma2Config, Gemma3TextConfig, SmolLM3Config and Phi3Config, with their
// defaults where a key is absent): RMSNorm, rotate-half RoPE, grouped-query attention, a gated feed-forward, no
// positions table.
ModelConfig llamaFamilyFromJson(const json &written, const ModelType &type, const std::string &source)
{
    std::string scalingKey;
    const json j = withRopeParametersRead(written, source, scalingKey);
    constexpr IntKey kvHeads {"num_key_value_heads", 1, 1024}, headDim {"head_dim", 1, 65536};
    const std::string name = type.name;
    // vocab_size when absent: each config class's default (Gemma 3's multimodal text_config leaves it out)
    const int vocab = name == "gemma2"                              ? 256000
        : name == "gemma3_text"                                     ? 262208
        : name == "qwen2" || name == "qwen3" || name == "qwen3_moe" ? 151936
        : name == "smollm3"                                         ? 128256
        : name == "phi3"                                            ? 32064
        : name == "gpt_oss"                                         ? 201088
                                                                    : 32000;
    ModelConfig c = hiddenShape(j, Family::Llama, name, vocab, source);
    c.kvHeads = readInt(j, kvHeads, c.heads, source);
    // LlamaAttention: head_dim = config.head_dim, else hidden_size / num_attention_heads (Mistral-Nemo: 32 heads of
    // 128 in a model 5120 wide); q_proj and o_proj are then H · head_dim wide.
    if (j.contains("head_dim") && !j["head_dim"].is_null())
        if (const int width = readInt(j, headDim, 0, source); c.dModel % c.heads != 0 || width != c.dModel / c.heads)
            c.headWidth = width;
    const int positions = name == "gemma3_text" ? 131072 // the config classes' defaults
        : name == "qwen2" || name == "qwen3" || name == "qwen3_moe" || name == "smollm3" ? 32768
        : name == "gemma2"                                                               ? 8192
        : name == "phi3"                                                                 ? 4096
        : name == "gpt_oss"                                                              ? 131072
                                                                                         : 2048;
    const int maxPositions = readInt(j, kMaxPositions, positions, source);
    c.context = std::min(maxPositions, int(kPositions.maximum));
    c.lnEpsilon = j.contains("rms_norm_eps") ? float(jsonNumber(j, "rms_norm_eps", 1e-12, 1.0, source))
        : name == "olmo2" || name == "phi3" || name == "gpt_oss" ? 1e-5f // their config classes' default
                                                                 : 1e-6f;
    c.sourceKeys["layer_norm_epsilon"] = "rms_norm_eps";
    const bool gemma = name == "gemma2" || name == "gemma3_text";
    c.activation = gemma ? Activation::GeluTanh // readGemma reads hidden_activation
                         : parseActivation(readString(j, "hidden_act", "silu", source), "hidden_act", source);
    if (c.activation != Activation::Silu && !gemma)
        throw Error(source + ": key 'hidden_act': a " + name + " model's SwiGLU takes silu, not '"
            + readString(j, "hidden_act", "", source) + "'");
    c.positions = PositionKind::RopeHalf;
    c.ropeBase = j.contains("rope_theta") ? float(jsonNumber(j, "rope_theta", 2.0, 1e9, source))
        : name == "smollm3"               ? 2e6f // SmolLM3Config's default
        : name == "gpt_oss"               ? 150000.0f
                                          : 10000.0f;
    c.ropeScaling = readRopeScaling(j, source, scalingKey, name, maxPositions);
    if (name == "gpt_oss" && !j.contains("rope_scaling")) { // GptOssConfig's YaRN
        c.ropeScaling.kind = RopeScaling::Kind::Yarn;
        c.ropeScaling.factor = 32.0;
        c.ropeScaling.originalContext = 4096;
        c.ropeScaling.truncate = false;
        c.ropeScaling.attentionFactor = 0.1 * std::log(32.0) + 1.0;
    }
    c.norm = NormKind::RmsNorm;
    c.gatedFfn = true;
    c.tiedHead = readBool(j, "tie_word_embeddings", name == "smollm3", source); // SmolLM3Config ties by default
    if (name == "qwen2") {
        c.qkvBias = true; // Qwen2Attention: q, k and v with bias, o without
        c.outBias = false;
        c.mlpBias = false;
        if (readBool(j, "use_sliding_window", false, source))
            readQwen2Window(j, c, source);
    } else if (name == "qwen3" || name == "qwen3_moe") { // Qwen3Attention: attention_bias on q, k, v and o; q_norm
                                                         // and k_norm per head
        c.qkvBias = c.outBias = readBool(j, "attention_bias", false, source);
        c.mlpBias = false;
        c.qkNorm = QkNorm::Heads;
        if (readBool(j, "use_sliding_window", false, source))
            readQwen2Window(j, c, source);
    } else if (name == "olmo2") { // Olmo2DecoderLayer: a norm on each sub-layer's output and none before it; QK-norm
                                  // over the whole q and k projections
        c.qkvBias = c.outBias = readBool(j, "attention_bias", false, source);
        c.mlpBias = false;
        c.qkNorm = QkNorm::Projections;
        c.layerNorm = LayerNormPlacement::AfterSublayer;
    } else if (gemma) {
        readGemma(j, c, source);
    } else if (name == "smollm3") {
        readSmolLM3(j, c, source);
    } else if (name == "phi3") {
        readPhi3(j, c, source);
    } else if (name == "gpt_oss") {
        readGptOss(j, c, source);
    } else {
        c.qkvBias = c.outBias = readBool(j, "attention_bias", false, source);
        c.mlpBias = readBool(j, "mlp_bias", false, source);
    }
    if (name == "mistral" || name == "mixtral")
        c.slidingWindow = readInt(j, kWindow, 0, source);
    if (name == "qwen3_moe") { // Qwen3MoeSparseMoeBlock: experts moe_intermediate_size wide, in every layer here
        constexpr IntKey step {"decoder_sparse_step", 1, 1 << 16}, expertWidth {"moe_intermediate_size", 1, 1 << 20};
        const json *dense = optionalJsonMember(j, "mlp_only_layers");
        if (readInt(j, step, 1, source) != 1 || (dense && !(dense->is_array() && dense->empty())))
            throw Error(source + ": keys 'decoder_sparse_step' and 'mlp_only_layers': this version reads a "
                + "qwen3_moe model with experts in every layer (decoder_sparse_step 1, no mlp_only_layers)");
        if (!readBool(j, "norm_topk_prob", false, source))
            throw Error(source + ": key 'norm_topk_prob': false (the chosen experts' weights not renormalised) is not "
                + "read; Qwen3-MoE's checkpoints set it true");
        c.dFF = readInt(j, expertWidth, 768, source);
        c.sourceKeys[kInner.key] = expertWidth.key;
    }
    if (name == "mixtral" || name == "qwen3_moe" || name == "gpt_oss") { // MixtralSparseMoeBlock,
        // Qwen3MoeSparseMoeBlock, GptOssMLP: in every layer
        const bool qwen = name == "qwen3_moe", oss = name == "gpt_oss";
        const IntKey experts {qwen ? "num_experts" : "num_local_experts", 2, 1024},
            topK {"num_experts_per_tok", 1, 1024};
        c.experts = readInt(j, experts, qwen || oss ? 128 : 8, source);
        c.expertTopK = readInt(j, topK, qwen ? 8 : oss ? 4 : 2, source);
        c.sourceKeys[kExperts.key] = experts.key;
        c.sourceKeys[kTopK.key] = topK.key;
        c.droplessRouting = true;
        if (j.contains("router_aux_loss_coef"))
            c.routerAuxLossCoef = float(jsonNumber(j, "router_aux_loss_coef", 0.0, 1e6, source));
    }
    c.tokenizer = readString(j, "atlas_tokenizer", "gpt2", source); // gpt2: the directory's own files
    c.description = readString(j, "atlas_description", "", source);
    c.sample = readString(j, "atlas_sample", "", source);
    c.task = readString(j, "atlas_task", "", source);
    c.validate(source);
    return c;
}

// GPT-NeoX (Pythia; transformers' GPTNeoXConfig defaults): LayerNorm with bias, one fused query_key_value per head,
// rotary on the first rotary_pct of each head, parallel residual, exact GELU, an untied embed_out.
ModelConfig neoxFromJson(const json &written, const std::string &source)
{
    std::string scalingKey;
    const json j = withRopeParametersRead(written, source, scalingKey);
    ModelConfig c = hiddenShape(j, Family::GptNeoX, "gpt_neox", 50432, source);
    c.context = std::min(readInt(j, kMaxPositions, 2048, source), int(kPositions.maximum));
    c.lnEpsilon = j.contains("layer_norm_eps") ? float(jsonNumber(j, "layer_norm_eps", 1e-12, 1.0, source)) : 1e-5f;
    c.sourceKeys["layer_norm_epsilon"] = "layer_norm_eps";
    c.activation = parseActivation(readString(j, "hidden_act", "gelu", source), "hidden_act", source);
    c.positions = PositionKind::RopeHalf;
    const char *baseKey = j.contains("rope_theta") ? "rope_theta" : "rotary_emb_base";
    c.ropeBase = j.contains(baseKey) ? float(jsonNumber(j, baseKey, 2.0, 1e9, source)) : 10000.0f;
    c.ropeScaling = readRopeScaling(j, source, scalingKey);
    if (c.ropeScaling.kind == RopeScaling::Kind::Llama3)
        throw Error(source + ": key '" + scalingKey + "': GPT-NeoX takes linear scaling, not llama3");
    const double pct = j.contains("rotary_pct") ? jsonNumber(j, "rotary_pct", 0.0, 1.0, source) : 0.25;
    if (c.heads > 0 && c.dModel % c.heads == 0) {
        // as GPTNeoXAttention, int(head_size · rotary_pct), allowing for a decimal that missed an integer product
        c.rotaryDims = int(double(c.dModel / c.heads) * pct + 1e-9);
        if (c.rotaryDims < 2 || c.rotaryDims % 2 != 0)
            throw Error(source + ": key 'rotary_pct' " + std::to_string(pct) + " turns " + std::to_string(c.rotaryDims)
                + " dimensions of each head: RoPE needs an even number, at least 2");
        if (c.rotaryDims == c.dModel / c.heads)
            c.rotaryDims = 0;
    }
    c.parallelResidual = readBool(j, "use_parallel_residual", true, source);
    c.tiedHead = readBool(j, "tie_word_embeddings", false, source);
    c.qkvBias = c.outBias = readBool(j, "attention_bias", true, source);
    c.mlpBias = true;
    c.description = readString(j, "atlas_description", "", source);
    c.sample = readString(j, "atlas_sample", "", source);
    c.validate(source);
    return c;
}

// GPT-Neo (TinyStories; transformers' GPTNeoConfig): learned positions, q/k/v without bias, unscaled scores, layers
// that alternate global attention and local attention over the last window_size positions, tied head.
ModelConfig neoFromJson(const json &j, const std::string &source)
{
    constexpr IntKey layers {"num_layers", 1, 256}, heads {"num_heads", 1, 1024}, window {"window_size", 1, 1 << 24};
    requireKeys(j, {"hidden_size", "num_layers", "num_heads"}, "gpt_neo", source);
    ModelConfig c;
    c.family = Family::GptNeo;
    c.modelType = "gpt_neo";
    c.dModel = readInt(j, kHidden, 0, source);
    c.layers = readInt(j, layers, 0, source);
    c.heads = readInt(j, heads, 0, source);
    const int64_t defaultInner = 4 * int64_t(c.dModel);
    c.dFF = readInt(j, kIntermediate, std::min<int64_t>(defaultInner, kIntermediate.maximum), source);
    c.vocab = readInt(j, kVocab, 50257, source);
    c.context = readInt(j, kMaxPositions, 2048, source);
    c.sourceKeys = {{kEmbd.key, kHidden.key}, {kLayers.key, layers.key}, {kHeads.key, heads.key},
        {kInner.key, kIntermediate.key}, {kPositions.key, kMaxPositions.key}};
    c.lnEpsilon
        = j.contains("layer_norm_epsilon") ? float(jsonNumber(j, "layer_norm_epsilon", 1e-12, 1.0, source)) : 1e-5f;
    c.activation
        = parseActivation(readString(j, "activation_function", "gelu_new", source), "activation_function", source);
    c.positions = PositionKind::Learned;
    c.scaleScores = false;
    c.qkvBias = false;
    c.outBias = c.mlpBias = true;
    c.tiedHead = true;
    // attention_types: [[["global", "local"], 6]] repeats the pattern 6 times, one kind per layer.
    const std::string where = source + ": key 'attention_types'";
    if (j.contains("attention_types")) {
        const json &types = j["attention_types"];
        if (!types.is_array() || types.size() > size_t(layers.maximum))
            throw Error(where + " must be a list of [[types …], repeats]");
        std::vector<std::string> perLayer;
        for (size_t at = 0; at < types.size(); ++at) {
            const json &item = types[at];
            if (!item.is_array() || item.size() != 2 || !item[0].is_array() || item[0].size() > size_t(layers.maximum))
                throw Error(where + " must be a list of [[types …], repeats], has " + shownJson(item));
            if (!item[1].is_number_integer() || item[1].get<int64_t>() < 0 || item[1].get<int64_t>() > layers.maximum)
                throw Error(where + " [" + std::to_string(at) + "]: the repeat count must be an integer in 0.."
                    + std::to_string(layers.maximum) + ", is " + shownJson(item[1]));
            for (int64_t r = 0; r < item[1].get<int64_t>(); ++r)
                for (const json &type : item[0]) {
                    if (!type.is_string() || (type != "global" && type != "local"))
                        throw Error(where + ": a type is 'global' or 'local', not " + shownJson(type));
                    if (perLayer.size() > size_t(layers.maximum))
                        throw Error(where + " names more layers than num_layers");
                    perLayer.push_back(type.get<std::string>());
                }
        }
        if (perLayer.size() != size_t(c.layers))
            throw Error(where + " names " + std::to_string(perLayer.size()) + " layers, num_layers is "
                + std::to_string(c.layers));
        for (size_t i = 0; i < perLayer.size(); ++i)
            if (perLayer[i] == "local")
                c.windowedLayers.push_back(int(i));
    }
    if (!c.windowedLayers.empty())
        c.slidingWindow = readInt(j, window, 256, source);
    c.description = readString(j, "atlas_description", "", source);
    c.sample = readString(j, "atlas_sample", "", source);
    c.validate(source);
    return c;
}

// BERT (transformers' BertConfig): learned absolute positions and segment embeddings summed and normalised, post-LN
// bidirectional blocks, exact GELU, the masked-LM head tied to the word embeddings.
ModelConfig bertFromJson(const json &j, const std::string &source)
{
    constexpr IntKey types {"type_vocab_size", 1, 1024};
    ModelConfig c = hiddenShape(j, Family::Bert, "bert", 30522, source);
    const std::string positions = readString(j, "position_embedding_type", "absolute", source);
    if (positions != "absolute" && positions != "relative_key")
        throw Error(source + ": key 'position_embedding_type': '" + positions
            + "' is not supported (BERT's absolute positions and relative_key are; relative_key_query is not)");
    c.context = readInt(j, kMaxPositions, 512, source);
    c.tokenTypes = readInt(j, types, 2, source);
    c.lnEpsilon = j.contains("layer_norm_eps") ? float(jsonNumber(j, "layer_norm_eps", 1e-12, 1.0, source)) : 1e-12f;
    c.sourceKeys["layer_norm_epsilon"] = "layer_norm_eps";
    c.activation = parseActivation(readString(j, "hidden_act", "gelu", source), "hidden_act", source);
    // relative_key (Shaw et al. 2018 as BertSelfAttention has it): no absolute positions are added; each layer's
    // distance_embedding [2·max_positions − 1, d] gives q_i · e(i − j) / √d, every distance within the context.
    c.positions = positions == "relative_key" ? PositionKind::Shaw : PositionKind::Learned;
    if (c.positions == PositionKind::Shaw) {
        c.relativeClip = c.context - 1;
        c.relativeKeySign = -1;
    }
    c.layerNorm = LayerNormPlacement::Post;
    c.causal = false;
    c.description = readString(j, "atlas_description", "", source);
    c.sample = readString(j, "atlas_sample", "", source);
    // The project's own BERT-layout models (train --family bert) read bytes and name their special tokens here.
    c.tokenizer = readString(j, "atlas_tokenizer", "gpt2", source);
    c.task = readString(j, "atlas_task", "", source);
    readSpecialTokens(j, c, source);
    c.fourier = FourierLayers::fromJson(j, source); // the project's FNet in BERT's layout (train --fourier)
    c.shared = SharedBlocks::fromJson(j, source); // ALBERT's sharing (train --shared-blocks)
    c.validate(source);
    return c;
}

// T5 (transformers' T5Config): an encoder and a decoder of pre-norm blocks with RMS layer norms, relative position
// buckets learned by each stack's first block, unscaled scores, no biases; v1.0's ReLU feed-forward and a tied head
// read through d_model^−½, or v1.1's and Flan's gated GELU and an untied head (feed_forward_proj).
ModelConfig t5FromJson(const json &j, const std::string &source)
{
    constexpr IntKey model {"d_model", 1, 65536}, kv {"d_kv", 1, 65536}, heads {"num_heads", 1, 1024},
        layers {"num_layers", 1, 256}, decoderLayers {"num_decoder_layers", 1, 256}, ff {"d_ff", 1, 1 << 20},
        buckets {"relative_attention_num_buckets", 4, 4096}, distance {"relative_attention_max_distance", 2, 1 << 20},
        start {"decoder_start_token_id", 0, 1 << 24};
    requireKeys(j, {"d_model", "d_kv", "num_heads", "num_layers", "d_ff"}, "t5", source);
    if (!readBool(j, "is_encoder_decoder", true, source))
        throw Error(source + ": key 'is_encoder_decoder' is false: a T5 encoder alone (T5EncoderModel) has no decoder "
            + "and no logits to show; T5ForConditionalGeneration checkpoints open");
    ModelConfig c;
    c.family = Family::T5;
    c.modelType = "t5";
    c.dModel = readInt(j, model, 0, source);
    c.headWidth = readInt(j, kv, 0, source);
    c.heads = readInt(j, heads, 0, source);
    c.encoderLayers = readInt(j, layers, 0, source);
    c.layers = readInt(j, decoderLayers, c.encoderLayers, source);
    c.dFF = readInt(j, ff, 0, source);
    c.vocab = readInt(j, kVocab, 32128, source);
    c.sourceKeys = {{kEmbd.key, model.key}, {kHeads.key, heads.key}, {kInner.key, ff.key},
        {kLayers.key, j.contains(decoderLayers.key) ? decoderLayers.key : layers.key}};
    c.context = readInt(j, kPositions, 512, source); // T5 has no position table: n_positions only bounds the input
    c.lnEpsilon
        = j.contains("layer_norm_epsilon") ? float(jsonNumber(j, "layer_norm_epsilon", 1e-12, 1.0, source)) : 1e-6f;
    // T5Config: "gated-gelu" → a gate of gelu_new; "relu", "gated-silu" … → the activation after the dash.
    const std::string proj = readString(j, "feed_forward_proj", "relu", source);
    const bool gated = proj.starts_with("gated-");
    const std::string act = gated ? proj.substr(6) : proj;
    if (act != "relu" && act != "gelu" && act != "gelu_new" && act != "silu")
        throw Error(source + ": key 'feed_forward_proj': '" + proj
            + "' is not supported (expected relu, gated-gelu, gelu, gated-relu, gated-silu or silu)");
    c.gatedFfn = gated;
    c.activation = proj == "gated-gelu" ? Activation::GeluTanh : parseActivation(act, "feed_forward_proj", source);
    c.norm = NormKind::RmsNorm;
    c.positions = PositionKind::T5;
    c.relativeBuckets = readInt(j, buckets, 32, source);
    c.relativeMaxDistance = readInt(j, distance, 128, source);
    c.scaleScores = false;
    c.qkvBias = c.outBias = c.mlpBias = false;
    c.tiedHead = readBool(j, "tie_word_embeddings", true, source);
    c.decoderStart = readInt(j, start, 0, source);
    c.description = readString(j, "atlas_description", "", source);
    c.sample = readString(j, "atlas_sample", "", source);
    c.decoderSample = readString(j, "atlas_decoder_sample", "", source);
    c.validate(source);
    return c;
}

} // namespace

ModelConfig configjson::familyFromJson(const json &j, const ModelType &type, const std::string &source)
{
    switch (type.family) {
    case Family::Llama:
        return llamaFamilyFromJson(j, type, source);
    case Family::GptNeoX:
        return neoxFromJson(j, source);
    case Family::GptNeo:
        return neoFromJson(j, source);
    case Family::Bert:
        return bertFromJson(j, source);
    case Family::T5:
        return t5FromJson(j, source);
    case Family::Gpt2:
        break;
    }
    throw Error(source + ": model_type '" + type.name + "' is read as GPT-2's config");
}

} // namespace atlas
