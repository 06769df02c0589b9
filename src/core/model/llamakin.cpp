#include "model/modelconfig.h"

#include "io/jsonread.h"
#include "model/configjson.h"
#include "util/error.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

// Llama's kin (docs/models.md, "Families"): the model types that share LlamaConfig's keys and Llama's block. Each is
// a row of kLlamaKin: its config class's defaults where config.json leaves a key out, its experts' keys, and the
// functions that read and write the keys it adds to Llama's. Adding one is a row here and one in kModelTypes.
namespace atlas {

using namespace configjson;

namespace {

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
// and no rope_scaling, the others with rope_theta and rope_scaling.
void readGemma(const json &j, ModelConfig &c, const std::string &source, bool gemma3)
{
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
    if (!j.contains("head_dim") || j["head_dim"].is_null())
        c.headWidth = 256; // Gemma2Config's and Gemma3TextConfig's default
    if (gemma3) {
        c.qkNorm = QkNorm::Heads;
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
    if (!j.contains("rope_scaling")) { // GptOssConfig's YaRN
        c.ropeScaling.kind = RopeScaling::Kind::Yarn;
        c.ropeScaling.factor = 32.0;
        c.ropeScaling.originalContext = 4096;
        c.ropeScaling.truncate = false;
        c.ropeScaling.attentionFactor = 0.1 * std::log(32.0) + 1.0;
    }
}

// Llama's and Mistral's biases: attention_bias on q, k, v and o, mlp_bias on the feed-forward (LlamaConfig).
void readLlama(const json &j, ModelConfig &c, const std::string &source)
{
    c.qkvBias = c.outBias = readBool(j, "attention_bias", false, source);
    c.mlpBias = readBool(j, "mlp_bias", false, source);
}

// Mistral and Mixtral: a sliding_window over every layer, when it is not null.
void readMistral(const json &j, ModelConfig &c, const std::string &source)
{
    readLlama(j, c, source);
    c.slidingWindow = readInt(j, kWindow, 0, source);
}

// Qwen2Attention: q, k and v with bias, o without; a window with use_sliding_window.
void readQwen2(const json &j, ModelConfig &c, const std::string &source)
{
    c.qkvBias = true;
    c.outBias = false;
    c.mlpBias = false;
    if (readBool(j, "use_sliding_window", false, source))
        readQwen2Window(j, c, source);
}

// Qwen3Attention: attention_bias on q, k, v and o; q_norm and k_norm per head; Qwen2's window.
void readQwen3(const json &j, ModelConfig &c, const std::string &source)
{
    c.qkvBias = c.outBias = readBool(j, "attention_bias", false, source);
    c.mlpBias = false;
    c.qkNorm = QkNorm::Heads;
    if (readBool(j, "use_sliding_window", false, source))
        readQwen2Window(j, c, source);
}

// Qwen3MoeSparseMoeBlock: Qwen3's attention, experts moe_intermediate_size wide, in every layer here.
void readQwen3Moe(const json &j, ModelConfig &c, const std::string &source)
{
    readQwen3(j, c, source);
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

// Olmo2DecoderLayer: a norm on each sub-layer's output and none before it; QK-norm over the whole q and k projections.
void readOlmo2(const json &j, ModelConfig &c, const std::string &source)
{
    c.qkvBias = c.outBias = readBool(j, "attention_bias", false, source);
    c.mlpBias = false;
    c.qkNorm = QkNorm::Projections;
    c.layerNorm = LayerNormPlacement::AfterSublayer;
}

void readGemma2(const json &j, ModelConfig &c, const std::string &source)
{
    readGemma(j, c, source, false);
}

void readGemma3(const json &j, ModelConfig &c, const std::string &source)
{
    readGemma(j, c, source, true);
}

// The keys each writer adds to Llama's (as each config class writes them).

void writeLlama(const ModelConfig &c, json &j)
{
    j["attention_bias"] = c.qkvBias;
    j["mlp_bias"] = c.mlpBias;
}

void writeMistral(const ModelConfig &c, json &j)
{
    j["sliding_window"] = c.slidingWindow > 0 ? json(c.slidingWindow) : json(nullptr);
}

void writeAttentionBias(const ModelConfig &c, json &j)
{
    j["attention_bias"] = c.qkvBias;
}

// Each layer's kind as transformers ≥ 4.53 writes it: "sliding_attention" or "full_attention".
json layerTypes(const ModelConfig &c)
{
    json types = json::array();
    for (int i = 0; i < c.layers; ++i)
        types.push_back(c.windowed(i) ? "sliding_attention" : "full_attention");
    return types;
}

void writeQwen2(const ModelConfig &c, json &j)
{
    j["use_sliding_window"] = c.slidingWindow > 0;
    if (c.slidingWindow > 0) { // layer_types for transformers ≥ 4.53, max_window_layers for the older ones
        j["sliding_window"] = c.slidingWindow;
        j["layer_types"] = layerTypes(c);
        j["max_window_layers"] = c.windowedLayers.empty() ? 0 : c.windowedLayers.front();
    }
}

void writeQwen3(const ModelConfig &c, json &j)
{
    writeAttentionBias(c, j);
    writeQwen2(c, j);
}

void writeQwen3Moe(const ModelConfig &c, json &j)
{
    writeAttentionBias(c, j);
    j["moe_intermediate_size"] = c.dFF;
    j["norm_topk_prob"] = true;
    j["decoder_sparse_step"] = 1;
    j["mlp_only_layers"] = json::array();
}

void writeGemma2(const ModelConfig &c, json &j)
{
    writeAttentionBias(c, j);
    j["hidden_act"] = j["hidden_activation"] = "gelu_pytorch_tanh";
    j["head_dim"] = c.headDim();
    j["query_pre_attn_scalar"] = shortestDecimal(c.queryScaleBase);
    j["attn_logit_softcapping"] = c.attentionSoftcap > 0 ? json(shortestDecimal(c.attentionSoftcap)) : json(nullptr);
    j["final_logit_softcapping"] = c.logitSoftcap > 0 ? json(shortestDecimal(c.logitSoftcap)) : json(nullptr);
    j["sliding_window"] = c.slidingWindow > 0 ? json(c.slidingWindow) : json(nullptr);
    j["layer_types"] = layerTypes(c);
}

void writeGemma3(const ModelConfig &c, json &j)
{
    writeGemma2(c, j);
    j["rope_local_base_freq"] = shortestDecimal(c.ropeLocalBase);
}

void writeSmolLM3(const ModelConfig &c, json &j)
{
    writeLlama(c, j);
    json flags = json::array(); // each layer's flag: 1 turns q and k, 0 is a NoPE layer
    for (int i = 0; i < c.layers; ++i)
        flags.push_back(c.rotates(i) ? 1 : 0);
    j["no_rope_layers"] = flags;
    j["use_sliding_window"] = c.slidingWindow > 0;
    j["sliding_window"] = c.slidingWindow > 0 ? json(c.slidingWindow) : json(nullptr);
    j["layer_types"] = layerTypes(c);
}

void writePhi3(const ModelConfig &c, json &j)
{
    j["partial_rotary_factor"] = c.rotaryDims > 0 ? double(c.rotaryDims) / c.headDim() : 1.0;
    j["sliding_window"] = c.slidingWindow > 0 ? json(c.slidingWindow) : json(nullptr);
}

void writeGptOss(const ModelConfig &c, json &j)
{
    writeAttentionBias(c, j);
    j["head_dim"] = c.headDim();
    j["sliding_window"] = c.slidingWindow > 0 ? json(c.slidingWindow) : json(nullptr);
    j["layer_types"] = layerTypes(c);
    j["swiglu_limit"] = shortestDecimal(c.gluClamp);
}

// The key that counts a mixture's experts and the config class's defaults; no key for a dense model.
struct ExpertKeys
{
    const char *count = nullptr;
    int experts = 0, topK = 0;
};

struct LlamaKin
{
    const char *modelType;
    int vocab, positions; // vocab_size and max_position_embeddings when absent
    float rmsEpsilon, ropeTheta; // rms_norm_eps and rope_theta when absent
    bool tiedHead; // tie_word_embeddings when absent
    bool ownActivation; // the reader reads its own activation (Gemma's hidden_activation), not silu's hidden_act
    ExpertKeys experts;
    void (*read)(const json &, ModelConfig &, const std::string &source);
    void (*write)(const ModelConfig &, json &);
};

// Gemma 3's multimodal text_config leaves vocab_size out, hence each class's own default.
constexpr LlamaKin kLlamaKin[] = {
    {"llama", 32000, 2048, 1e-6f, 10000.0f, false, false, {}, readLlama, writeLlama},
    {"mistral", 32000, 2048, 1e-6f, 10000.0f, false, false, {}, readMistral, writeMistral},
    {"mixtral", 32000, 2048, 1e-6f, 10000.0f, false, false, {"num_local_experts", 8, 2}, readMistral, writeMistral},
    {"qwen2", 151936, 32768, 1e-6f, 10000.0f, false, false, {}, readQwen2, writeQwen2},
    {"qwen3", 151936, 32768, 1e-6f, 10000.0f, false, false, {}, readQwen3, writeQwen3},
    {"qwen3_moe", 151936, 32768, 1e-6f, 10000.0f, false, false, {"num_experts", 128, 8}, readQwen3Moe, writeQwen3Moe},
    {"olmo2", 32000, 2048, 1e-5f, 10000.0f, false, false, {}, readOlmo2, writeAttentionBias},
    {"gemma2", 256000, 8192, 1e-6f, 10000.0f, true, true, {}, readGemma2, writeGemma2},
    {"gemma3_text", 262208, 131072, 1e-6f, 1e6f, true, true, {}, readGemma3, writeGemma3},
    {"smollm3", 128256, 32768, 1e-6f, 2e6f, true, false, {}, readSmolLM3, writeSmolLM3},
    {"phi3", 32064, 4096, 1e-5f, 10000.0f, false, false, {}, readPhi3, writePhi3},
    {"gpt_oss", 201088, 131072, 1e-5f, 150000.0f, false, false, {"num_local_experts", 128, 4}, readGptOss, writeGptOss},
};

const LlamaKin *findLlamaKin(const std::string &modelType)
{
    for (const LlamaKin &kin : kLlamaKin)
        if (modelType == kin.modelType)
            return &kin;
    return nullptr;
}

const LlamaKin &llamaKinOf(const std::string &modelType)
{
    if (const LlamaKin *kin = findLlamaKin(modelType))
        return *kin;
    throw Error("model_type '" + modelType + "' is not one of Llama's kin");
}

} // namespace

bool configjson::llamaKinHasExperts(const std::string &modelType)
{
    const LlamaKin *kin = findLlamaKin(modelType);
    return kin && kin->experts.count;
}

// RMSNorm, rotate-half RoPE, grouped-query attention, a gated feed-forward, no positions table (transformers'
// LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config, Olmo2Config, Gemma2Config, Gemma3TextConfig, SmolLM3Config,
// Phi3Config and GptOssConfig, with their defaults where a key is absent).
ModelConfig configjson::llamaKinFromJson(const json &written, const ModelType &type, const std::string &source)
{
    const LlamaKin &kin = llamaKinOf(type.name);
    std::string scalingKey;
    const json j = withRopeParametersRead(written, source, scalingKey);
    constexpr IntKey kvHeads {"num_key_value_heads", 1, 1024}, headDim {"head_dim", 1, 65536};
    const std::string name = type.name;
    ModelConfig c = hiddenShape(j, Family::Llama, name, kin.vocab, source);
    c.kvHeads = readInt(j, kvHeads, c.heads, source);
    // LlamaAttention: head_dim = config.head_dim, else hidden_size / num_attention_heads (Mistral-Nemo: 32 heads of
    // 128 in a model 5120 wide); q_proj and o_proj are then H · head_dim wide.
    if (j.contains("head_dim") && !j["head_dim"].is_null())
        if (const int width = readInt(j, headDim, 0, source); c.dModel % c.heads != 0 || width != c.dModel / c.heads)
            c.headWidth = width;
    const int maxPositions = readInt(j, kMaxPositions, kin.positions, source);
    c.context = std::min(maxPositions, int(kPositions.maximum));
    c.lnEpsilon
        = j.contains("rms_norm_eps") ? float(jsonNumber(j, "rms_norm_eps", 1e-12, 1.0, source)) : kin.rmsEpsilon;
    c.sourceKeys["layer_norm_epsilon"] = "rms_norm_eps";
    if (!kin.ownActivation) {
        c.activation = parseActivation(readString(j, "hidden_act", "silu", source), "hidden_act", source);
        if (c.activation != Activation::Silu)
            throw Error(source + ": key 'hidden_act': a " + name + " model's SwiGLU takes silu, not '"
                + readString(j, "hidden_act", "", source) + "'");
    }
    c.positions = PositionKind::RopeHalf;
    c.ropeBase = j.contains("rope_theta") ? float(jsonNumber(j, "rope_theta", 2.0, 1e9, source)) : kin.ropeTheta;
    c.ropeScaling = readRopeScaling(j, source, scalingKey, name, maxPositions);
    c.norm = NormKind::RmsNorm;
    c.gatedFfn = true;
    c.tiedHead = readBool(j, "tie_word_embeddings", kin.tiedHead, source);
    kin.read(j, c, source);
    if (kin.experts.count) { // MixtralSparseMoeBlock, Qwen3MoeSparseMoeBlock, GptOssMLP: in every layer
        const IntKey experts {kin.experts.count, 2, 1024}, topK {"num_experts_per_tok", 1, 1024};
        c.experts = readInt(j, experts, kin.experts.experts, source);
        c.expertTopK = readInt(j, topK, kin.experts.topK, source);
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

void configjson::writeLlamaKinKeys(const ModelConfig &c, json &j)
{
    const LlamaKin &kin = llamaKinOf(c.modelType);
    if (c.headWidth > 0)
        j["head_dim"] = c.headWidth;
    kin.write(c, j);
    if (kin.experts.count) {
        j[kin.experts.count] = c.experts;
        j["num_experts_per_tok"] = c.expertTopK;
        j["router_aux_loss_coef"] = shortestDecimal(c.routerAuxLossCoef);
    }
}

} // namespace atlas
