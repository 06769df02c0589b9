#include "model/modelconfig.h"

#include "model/configjson.h"

#include "io/jsonread.h"
#include "model/parameternames.h"
#include "util/error.h"
#include "util/text.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <tuple>
#include <utility>

namespace atlas {

namespace configjson {

int readInt(const json &j, const IntKey &k, int64_t fallback, const std::string &source)
{
    return int(jsonInteger(j, k.key, {source, ""}, k.minimum, k.maximum, fallback));
}

std::string readString(const json &j, const char *key, const std::string &fallback, const std::string &source)
{
    return jsonString(j, key, {source, ""}, fallback);
}

Activation parseActivation(const std::string &s, const char *key, const std::string &source)
{
    if (s == "gelu_new" || s == "gelu_pytorch_tanh" || s == "gelu_fast")
        return Activation::GeluTanh;
    if (s == "gelu")
        return Activation::GeluErf;
    if (s == "relu")
        return Activation::Relu;
    if (s == "silu" || s == "swish")
        return Activation::Silu;
    if (s == "quick_gelu")
        return Activation::QuickGelu;
    throw Error(source + ": key '" + key + "': unsupported value '" + shownText(s)
        + "' (expected gelu_new, gelu_pytorch_tanh, gelu_fast, gelu, relu, silu, swish or quick_gelu)");
}

std::string activationName(Activation a)
{
    switch (a) {
    case Activation::GeluTanh:
        return "gelu_new";
    case Activation::GeluErf:
        return "gelu";
    case Activation::Relu:
        return "relu";
    case Activation::Silu:
        return "silu";
    case Activation::QuickGelu:
        return "quick_gelu";
    }
    return "gelu_new";
}

// The shortest decimal that reads back as `value`: 0.01f is written 0.01, not 0.009999999776482582.
double shortestDecimal(float value)
{
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;
    return std::strtod(std::string(text, end).c_str(), nullptr);
}

bool readBool(const json &j, const char *key, bool fallback, const std::string &source)
{
    return jsonBool(j, key, {source, ""}, fallback);
}

// atlas_special_tokens: {"[MASK]": 256, …}, sorted by id into c.specialTokens (checked against the vocabulary by
// validate).
void readSpecialTokens(const json &j, ModelConfig &c, const std::string &source)
{
    if (!j.contains("atlas_special_tokens"))
        return;
    const json &specials = j["atlas_special_tokens"];
    if (!specials.is_object() || specials.size() > 4096)
        throw Error(source + ": key 'atlas_special_tokens' must map at most 4096 names to token ids");
    for (const auto &[name, id] : specials.items()) {
        const std::string where = source + ": key 'atlas_special_tokens': '" + name + "'";
        if (!id.is_number_integer())
            throw Error(where + " must map to a token id, is " + shownJson(id));
        if (id.is_number_unsigned() ? id.get<uint64_t>() > uint64_t(INT_MAX)
                                    : id.get<int64_t>() < 0 || id.get<int64_t>() > INT_MAX)
            throw Error(
                where + " has id " + shownJson(id) + ", outside the vocabulary [0, " + std::to_string(c.vocab) + ")");
        c.specialTokens.push_back({name, int(id.get<int64_t>())});
    }
    std::sort(c.specialTokens.begin(), c.specialTokens.end(),
        [](const auto &a, const auto &b) { return a.second < b.second; });
}

constexpr ModelType kModelTypes[] = {{"gpt2", Family::Gpt2, "GPT2LMHeadModel", "gpt2"},
    {"llama", Family::Llama, "LlamaForCausalLM", "llama"}, {"mistral", Family::Llama, "MistralForCausalLM", "llama"},
    {"qwen2", Family::Llama, "Qwen2ForCausalLM", "qwen2"},
    {"gpt_neox", Family::GptNeoX, "GPTNeoXForCausalLM", "gptneox"},
    {"gpt_neo", Family::GptNeo, "GPTNeoForCausalLM", ""}, {"bert", Family::Bert, "BertForMaskedLM", ""},
    {"mixtral", Family::Llama, "MixtralForCausalLM", "llama"}, {"t5", Family::T5, "T5ForConditionalGeneration", "t5"},
    {"qwen3", Family::Llama, "Qwen3ForCausalLM", "qwen3"}, {"olmo2", Family::Llama, "Olmo2ForCausalLM", "olmo2"},
    {"gemma2", Family::Llama, "Gemma2ForCausalLM", "gemma2"},
    {"gemma3_text", Family::Llama, "Gemma3ForCausalLM", "gemma3"},
    {"smollm3", Family::Llama, "SmolLM3ForCausalLM", "smollm3"},
    {"qwen3_moe", Family::Llama, "Qwen3MoeForCausalLM", "qwen3moe"}, {"phi3", Family::Llama, "Phi3ForCausalLM", "phi3"},
    {"gpt_oss", Family::Llama, "GptOssForCausalLM", "gpt-oss"}};

std::string knownModelTypes()
{
    std::string known;
    for (const ModelType &t : kModelTypes)
        known += std::string(known.empty() ? "" : ", ") + t.name;
    return known + ", and gemma3's language model";
}

const ModelType &modelTypeOf(const std::string &name, const std::string &source)
{
    for (const ModelType &t : kModelTypes)
        if (name == t.name)
            return t;
    throw Error(source + ": key 'model_type': '" + name + "' is not a family this app opens (it opens "
        + knownModelTypes() + ")");
}

// The keys a family's config.json cannot do without (its shape).
void requireKeys(
    const json &j, std::initializer_list<const char *> keys, const std::string &modelType, const std::string &source)
{
    for (const char *key : keys)
        if (!j.contains(key))
            throw Error(source + ": key '" + key + "' is missing (a " + modelType + " config.json needs it)");
}

} // namespace configjson

using namespace configjson;

float ModelConfig::outputScale() const
{
    return family == Family::T5 && tiedHead ? 1.0f / std::sqrt(float(dModel)) : 1.0f;
}

const std::vector<std::string> &positionKindNames()
{
    static const std::vector<std::string> names
        = {"learned", "sinusoidal", "rope", "rope-half", "alibi", "shaw", "t5", "none"};
    return names;
}

std::string positionKindName(PositionKind kind)
{
    return positionKindNames().at(size_t(kind));
}

bool parsePositionKind(const std::string &name, PositionKind &kind)
{
    const auto &names = positionKindNames();
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
        return false;
    kind = PositionKind(it - names.begin());
    return true;
}

PositionKind positionKindArgument(const std::string &name, const std::string &field)
{
    PositionKind kind {};
    if (parsePositionKind(name, kind))
        return kind;
    std::string all;
    for (const std::string &n : positionKindNames())
        all += (all.empty() ? "" : ", ") + n;
    throw Error(field + ": unknown kind '" + name + "' (expected one of " + all + ")");
}

namespace {

const std::vector<std::string> &normaliserNames()
{
    static const std::vector<std::string> names = {"softmax", "sparsemax", "entmax15", "entmax"};
    return names;
}

} // namespace

std::string normaliserName(Normaliser n)
{
    return normaliserNames().at(size_t(n));
}

Normaliser normaliserArgument(const std::string &name, const std::string &field)
{
    const auto &names = normaliserNames();
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
        throw Error(field + ": unknown normaliser '" + name
            + "' (expected softmax, sparsemax, entmax15, or entmax for a learned α per head)");
    return Normaliser(it - names.begin());
}

std::string architectureName(Architecture a)
{
    return a == Architecture::Decoder ? "decoder" : a == Architecture::Encoder ? "encoder" : "encoder-decoder";
}

ModelConfig ModelConfig::gpt2Small()
{
    ModelConfig c;
    c.layers = 12;
    c.heads = 12;
    c.dModel = 768;
    c.dFF = 3072;
    c.vocab = 50257;
    c.context = 1024;
    return c;
}

std::string ModelConfig::keyName(const std::string &gpt2Name) const
{
    const auto it = sourceKeys.find(gpt2Name);
    return it == sourceKeys.end() ? gpt2Name : it->second;
}

void ModelConfig::validate(const std::string &source) const
{
    auto require = [&](bool ok, const std::string &what) {
        if (!ok)
            throw Error(source + ": " + what);
    };
    const std::string embd = keyName(kEmbd.key), head = keyName(kHeads.key), inner = keyName(kInner.key);
    for (const auto &[k, value] : {std::pair {kLayers, layers}, {kHeads, heads}, {kEmbd, dModel}, {kInner, dFF},
             {kVocab, vocab}, {kPositions, context}})
        require(value >= k.minimum && value <= k.maximum,
            keyName(k.key) + " must be in " + std::to_string(k.minimum) + ".." + std::to_string(k.maximum) + ", is "
                + std::to_string(value));
    require(headWidth == 0 || family == Family::T5 || family == Family::Llama,
        "only T5 and the Llama family have heads of another width than " + embd + " / " + head);
    require(headWidth > 0 || dModel % heads == 0,
        embd + " (" + std::to_string(dModel) + ") must be a multiple of " + head + " (" + std::to_string(heads) + ")");
    // Every weight matrix must fit a tensor (at most INT_MAX elements).
    for (const auto &[what, a, b] : {std::tuple {keyName(kVocab.key) + " · " + embd, vocab, dModel},
             {keyName(kPositions.key) + " · " + embd, context, dModel}, {embd + " · " + inner, dModel, dFF},
             {embd + " · " + head + " · d_kv", dModel, heads * headWidth}})
        require(int64_t(a) * int64_t(b) <= INT_MAX,
            what + " = " + std::to_string(int64_t(a) * int64_t(b))
                + " weights in one matrix, more than a tensor may hold (2147483647)");
    require(lnEpsilon > 0, keyName("layer_norm_epsilon") + " must be positive");
    require(kvHeads >= 0 && kvHeads <= heads && (kvHeads == 0 || heads % kvHeads == 0),
        "num_key_value_heads (" + std::to_string(kvHeads) + ") must divide num_attention_heads ("
            + std::to_string(heads) + ")");
    require(slidingWindow >= 0, "sliding_window must not be negative");
    for (int layer : windowedLayers)
        require(layer >= 0 && layer < layers, "a local-attention layer is outside the model's layers");
    for (int layer : noRopeLayers)
        require(layer >= 0 && layer < layers && rotatesQueriesAndKeys(),
            "a layer without RoPE must be a layer of a RoPE model");
    require(rotaryDims >= 0 && rotaryDims % 2 == 0 && rotaryDims <= headDim(),
        "the rotated dimensions (" + std::to_string(rotaryDims) + ") must be even and at most a head's width ("
            + std::to_string(headDim()) + ")");
    if (ropeScaling.kind == RopeScaling::Kind::Factors) {
        const size_t pairs = size_t(rotatedDims()) / 2;
        require(ropeScaling.frequencyFactors.size() == pairs,
            "rope_scaling.factors must hold one factor for each of the " + std::to_string(pairs)
                + " rotated pairs, holds " + std::to_string(ropeScaling.frequencyFactors.size()));
    }
    if (ropeScaling.kind == RopeScaling::Kind::LongRope) {
        const size_t pairs = size_t(rotatedDims()) / 2;
        for (const auto &[key, factors] : {std::pair {"short_factor", &ropeScaling.shortFactors},
                 std::pair {"long_factor", &ropeScaling.longFactors}})
            require(factors->size() == pairs,
                "rope_scaling." + std::string(key) + " must hold one factor for each of the " + std::to_string(pairs)
                    + " rotated pairs, holds " + std::to_string(factors->size()));
    }
    require(family == Family::Gpt2 || family == Family::T5
            || (!reversible && encoderLayers == 0 && (experts == 0 || llamaKinHasExperts(modelType))),
        "a " + modelType + " model has one stack of dense blocks");
    require(family != Family::T5 || (encoderLayers > 0 && !reversible && experts == 0),
        "a t5 model has an encoder and a decoder of dense blocks");
    require(family != Family::T5 || !gatedFfn || activation != Activation::GeluErf,
        "feed_forward_proj: T5Config reads 'gated-gelu' as a gate of gelu_new (tanh), so an exact-GELU gate has no "
        "name");
    require(decoderStart < vocab,
        "decoder_start_token_id (" + std::to_string(decoderStart) + ") is outside the vocabulary [0, "
            + std::to_string(vocab) + ")");
    require(tokenizer == "bytes" || tokenizer == "gpt2", "atlas_tokenizer must be 'bytes' or 'gpt2'");
    require(tokenizer != "bytes" || vocab >= 256, "a byte-level tokenizer needs vocab_size >= 256");
    require(!rotatesQueriesAndKeys() || headDim() % 2 == 0,
        "atlas_positions '" + positionKindName(positions) + "' rotates pairs of a head's dimensions: " + embd + " / "
            + head + " (" + std::to_string(headDim()) + ") must be even");
    require(qkNorm == QkNorm::None || rotatesQueriesAndKeys(),
        "QK-norm (q_norm and k_norm) normalises the queries and keys RoPE turns: this model's positions must be rope "
        "or rope-half, not "
            + positionKindName(positions));
    require(attentionSoftcap >= 0 && logitSoftcap >= 0 && queryScaleBase >= 0,
        "attn_logit_softcapping, final_logit_softcapping and query_pre_attn_scalar must be positive, or absent");
    require((!normAddsOne && layerNorm != LayerNormPlacement::Sandwich) || norm == NormKind::RmsNorm,
        "Gemma's norms (1 + γ, sandwiched around each sub-layer) are RMSNorms");
    require(!attentionSinks || (normaliser == Normaliser::Softmax && family == Family::Llama),
        "attention sinks (self_attn.sinks) join a softmax: a Llama-layout model with the softmax normaliser");
    require(gluClamp >= 0 && (gluClamp == 0 || gatedFfn), "swiglu_limit must be positive and clamp a gated unit");
    require(activation != Activation::QuickGelu || gatedFfn,
        "quick_gelu is read as the gate of a gated feed-forward (gpt-oss's) only");
    require(positions != PositionKind::T5 || relativeBuckets >= 4,
        "atlas_relative_buckets must be at least 4 (half exact distances, half logarithmic)");
    require(positions != PositionKind::T5 || relativeMaxDistance > relativeBuckets / 2,
        "atlas_relative_max_distance must exceed half of atlas_relative_buckets");
    const std::string expertsKey = keyName(kExperts.key);
    require(experts >= kExperts.minimum && experts <= kExperts.maximum && experts != 1,
        expertsKey + " must be 0 (dense feed-forward layers) or 2.." + std::to_string(kExperts.maximum) + ", is "
            + std::to_string(experts));
    require(experts == 0 || (expertTopK >= 1 && expertTopK <= experts),
        keyName(kTopK.key) + " must be in 1.." + expertsKey + " (" + std::to_string(experts) + "), is "
            + std::to_string(expertTopK));
    require(capacityFactor > 0 && capacityFactor <= 1024,
        "atlas_capacity_factor must be in (0, 1024], is " + std::to_string(capacityFactor));
    require(routerAuxLossCoef >= 0 && routerZLossCoef >= 0,
        "atlas_router_aux_loss_coef and atlas_router_z_loss_coef must not be negative");
    for (int layer : moeLayers)
        require(layer >= 0 && layer < layers,
            "atlas_moe_layers names layer " + std::to_string(layer) + ", the model has layers 0.."
                + std::to_string(layers - 1));
    for (size_t i = 0; i < specialTokens.size(); ++i) {
        const auto &[name, id] = specialTokens[i];
        require(!name.empty() && name.size() <= 64, "atlas_special_tokens: a name must have 1 to 64 characters");
        require(id >= 0 && id < vocab,
            "atlas_special_tokens: '" + name + "' has id " + std::to_string(id) + ", outside the vocabulary [0, "
                + std::to_string(vocab) + ")");
        require(tokenizer != "bytes" || id >= 256,
            "atlas_special_tokens: '" + name + "' has id " + std::to_string(id)
                + ", which is a byte's (the byte tokenizer's ids are 0..255): special tokens take the ids after the "
                  "ordinary tokens");
        if (i > 0 && specialTokens[i - 1].second == id)
            require(false,
                "atlas_special_tokens: '" + specialTokens[i - 1].first + "' and '" + name + "' share id "
                    + std::to_string(id));
    }
    require(normaliser == Normaliser::Softmax || (family == Family::Gpt2 && encoderLayers == 0),
        "atlas_attention_normaliser '" + normaliserName(normaliser)
            + "' is for GPT-2's layout with one stack (an encoder–decoder's cross-attention stays softmax)");
    require(
        spanRamp == 0 || (normaliser == Normaliser::Softmax && family == Family::Gpt2 && encoderLayers == 0 && causal),
        "atlas_span_ramp (adaptive attention span) is for a causal decoder in GPT-2's layout with the softmax "
        "normaliser");
    require(spanRamp <= context,
        "atlas_span_ramp must not exceed " + keyName(kPositions.key) + " (" + std::to_string(context) + "), is "
            + std::to_string(spanRamp));
    require(spanPenalty >= 0, "atlas_span_penalty must not be negative");
    require(!reversible || layerNorm == LayerNormPlacement::Pre,
        "atlas_reversible needs atlas_layer_norm 'pre' (a reversible block normalises the input of F and G)");
    funnel.validate(*this, source);
    sinkhorn.validate(*this, source);
    fourier.validate(*this, source);
    act.validate(*this, source);
    shared.validate(*this, source);
    if (isEncoderDecoder()) {
        const std::string what
            = "an encoder-decoder model (atlas_encoder_layers " + std::to_string(encoderLayers) + ")";
        require(causal, what + " has a causal decoder: atlas_causal must be true");
        require(layerNorm == LayerNormPlacement::Pre, what + " needs atlas_layer_norm 'pre'");
        require(!reversible && experts == 0, what + " cannot have reversible blocks or experts (not implemented)");
        require(!biasesScores() || family == Family::T5,
            what + " takes learned, sinusoidal, rope, rope-half or no positions, not " + positionKindName(positions)
                + " (its score bias is not implemented across two stacks)");
    }
}

int ModelConfig::specialToken(const std::string &name) const
{
    for (const auto &[n, id] : specialTokens)
        if (n == name)
            return id;
    return -1;
}

std::vector<int> ModelConfig::sentinelTokens() const
{
    std::vector<int> ids;
    for (int id; (id = specialToken("<extra_id_" + std::to_string(ids.size()) + ">")) >= 0;)
        ids.push_back(id);
    return ids;
}

std::vector<int> ModelConfig::segmentsOf(const std::vector<int> &tokens) const
{
    std::vector<int> types(tokens.size(), 0);
    const int sep = specialToken("[SEP]");
    if (tokenTypes < 2 || sep < 0)
        return types;
    const auto first = std::find(tokens.begin(), tokens.end(), sep);
    if (first != tokens.end())
        std::fill(types.begin() + (first - tokens.begin()) + 1, types.end(), 1);
    return types;
}

std::vector<std::string> ModelConfig::checkpointPrefixes() const
{
    if (!multimodalType.empty()) // Gemma 3 as saved by transformers before 4.52, and after
        return {"language_model.model.", "model.language_model."};
    return {modelPrefix(family)};
}

int ModelConfig::ordinaryTokens() const
{
    // A checkpoint's special tokens may sit anywhere (BERT's [PAD] is 0): Hugging Face's masked-LM collator draws
    // its random replacements from the whole vocabulary.
    // The project's own models (bytes, in any layout) keep their special ids after the ordinary tokens.
    return specialTokens.empty() || (family != Family::Gpt2 && tokenizer != "bytes") ? vocab
                                                                                     : specialTokens.front().second;
}

ModelConfig ModelConfig::fromJson(const std::string &text, const std::string &source)
{
    const json j = parseJson(text, source);
    if (!j.is_object())
        throw Error(source + ": expected a JSON object");
    const std::string modelType = readString(j, "model_type", "gpt2", source);
    if (modelType == "gemma3") { // Gemma3ForConditionalGeneration: the language model is text_config's Gemma 3
        const json *text = optionalJsonMember(j, "text_config");
        if (!text || !text->is_object())
            throw Error(source + ": key 'text_config': a gemma3 (multimodal) config holds its language model's "
                + "settings there; it is " + (text ? shownJson(*text) : std::string("missing")));
        json inner = *text;
        inner["model_type"] = "gemma3_text";
        ModelConfig c = familyFromJson(inner, modelTypeOf("gemma3_text", source), source + " (text_config)");
        c.multimodalType = modelType;
        return c;
    }
    const ModelType &type = modelTypeOf(modelType, source);
    if (type.family != Family::Gpt2)
        return familyFromJson(j, type, source);
    ModelConfig c;
    c.modelTypeGiven = j.contains("model_type") && !j["model_type"].is_null();
    c.layers = readInt(j, kLayers, c.layers, source);
    c.heads = readInt(j, kHeads, c.heads, source);
    c.dModel = readInt(j, kEmbd, c.dModel, source);
    const int64_t defaultInner = 4 * int64_t(c.dModel); // null means 4 · n_embd
    if (!j.contains("n_inner") || j["n_inner"].is_null()) {
        if (defaultInner > kInner.maximum)
            throw Error(source + ": key 'n_inner' is null, and 4 · n_embd = " + std::to_string(defaultInner)
                + " is out of range (allowed: 1 to " + std::to_string(kInner.maximum) + ")");
    }
    c.dFF = readInt(j, kInner, defaultInner, source);
    c.vocab = readInt(j, kVocab, c.vocab, source);
    c.context = readInt(j, kPositions, readInt(j, kCtx, c.context, source), source);
    if (j.contains("layer_norm_epsilon"))
        c.lnEpsilon = float(jsonNumber(j, "layer_norm_epsilon", 1e-12, 1.0, source));
    c.activation
        = parseActivation(readString(j, "activation_function", "gelu_new", source), "activation_function", source);
    const std::string ln = readString(j, "atlas_layer_norm", "pre", source);
    if (ln != "pre" && ln != "post")
        throw Error(source + ": key 'atlas_layer_norm' must be 'pre' or 'post'");
    c.layerNorm = ln == "pre" ? LayerNormPlacement::Pre : LayerNormPlacement::Post;
    const std::string pos = readString(j, "atlas_positions", "learned", source);
    c.positions = positionKindArgument(pos, source + ": key 'atlas_positions'");
    if (j.contains("atlas_embedding_scale"))
        c.embeddingScale = float(jsonNumber(j, "atlas_embedding_scale", 1e-6, 1e6, source));
    c.tiedHead = readBool(j, "tie_word_embeddings", true, source); // GPT2LMHeadModel ties unless told
    if (j.contains("atlas_rope_base"))
        c.ropeBase = float(jsonNumber(j, "atlas_rope_base", 2.0, 1e9, source));
    c.relativeClip = readInt(j, kClip, c.relativeClip, source);
    c.relativeBuckets = readInt(j, kBuckets, c.relativeBuckets, source);
    c.relativeMaxDistance = readInt(j, kMaxDistance, c.relativeMaxDistance, source);
    c.causal = readBool(j, "atlas_causal", true, source);
    c.reversible = readBool(j, "atlas_reversible", false, source);
    c.normaliser = normaliserArgument(
        readString(j, "atlas_attention_normaliser", "softmax", source), source + ": key 'atlas_attention_normaliser'");
    c.encoderLayers = readInt(j, kEncoderLayers, 0, source);
    c.spanRamp = readInt(j, kSpanRamp, 0, source);
    if (j.contains("atlas_span_penalty"))
        c.spanPenalty = float(jsonNumber(j, "atlas_span_penalty", 0.0, 1e6, source));
    c.act = AdaptiveComputation::fromJson(j, source);
    c.shared = SharedBlocks::fromJson(j, source);
    if (j.contains("atlas_architecture")) {
        const std::string a = readString(j, "atlas_architecture", "", source);
        if (a != "decoder" && a != "encoder" && a != "encoder-decoder")
            throw Error(source + ": key 'atlas_architecture' must be 'decoder', 'encoder' or 'encoder-decoder', is '"
                + a + "'");
        if (a == "encoder" && !j.contains("atlas_causal"))
            c.causal = false;
        if (architectureName(c.architecture()) != a)
            throw Error(source + ": key 'atlas_architecture' says '" + a + "', but the config makes it "
                + architectureName(c.architecture())
                + (a == "encoder-decoder" ? " (an encoder-decoder needs atlas_encoder_layers >= 1)"
                        : a == "encoder"  ? " (an encoder has atlas_causal false and no atlas_encoder_layers)"
                                          : " (a decoder has atlas_causal true and no atlas_encoder_layers)"));
    }
    c.experts = readInt(j, kExperts, 0, source);
    c.expertTopK = readInt(j, kTopK, 1, source);
    if (j.contains("atlas_capacity_factor"))
        c.capacityFactor = float(jsonNumber(j, "atlas_capacity_factor", 1e-6, 1024.0, source));
    if (j.contains("atlas_router_aux_loss_coef"))
        c.routerAuxLossCoef = float(jsonNumber(j, "atlas_router_aux_loss_coef", 0.0, 1e6, source));
    if (j.contains("atlas_router_z_loss_coef"))
        c.routerZLossCoef = float(jsonNumber(j, "atlas_router_z_loss_coef", 0.0, 1e6, source));
    if (j.contains("atlas_moe_layers")) {
        const json &layersJson = j["atlas_moe_layers"];
        if (!layersJson.is_array() || layersJson.size() > size_t(kLayers.maximum))
            throw Error(source + ": key 'atlas_moe_layers' must be a list of layer numbers");
        for (const json &layer : layersJson) {
            if (!layer.is_number_integer())
                throw Error(source + ": key 'atlas_moe_layers' must be a list of layer numbers");
            c.moeLayers.push_back(int(std::clamp<int64_t>(layer.get<int64_t>(), -1, kLayers.maximum)));
        }
    }
    c.funnel = FunnelLayout::fromJson(j, source);
    c.sinkhorn = SinkhornLayout::fromJson(j, source);
    c.fourier = FourierLayers::fromJson(j, source);
    c.tokenizer = readString(j, "atlas_tokenizer", "gpt2", source);
    c.description = readString(j, "atlas_description", "", source);
    c.sample = readString(j, "atlas_sample", "", source);
    c.decoderSample = readString(j, "atlas_decoder_sample", "", source);
    c.task = readString(j, "atlas_task", "", source);
    readSpecialTokens(j, c, source);
    c.validate(source);
    return c;
}

std::string ModelConfig::toJson() const
{
    if (family != Family::Gpt2)
        return familyJson();
    json j = {
        {"model_type", "gpt2"},
        {"architectures", {"GPT2LMHeadModel"}},
        {"n_layer", layers},
        {"n_head", heads},
        {"n_embd", dModel},
        {"n_inner", dFF},
        {"vocab_size", vocab},
        {"n_positions", context},
        {"n_ctx", context},
        {"layer_norm_epsilon", lnEpsilon},
        {"activation_function", activationName(activation)},
        {"tie_word_embeddings", tiedHead},
        {"atlas_layer_norm", layerNorm == LayerNormPlacement::Pre ? "pre" : "post"},
        {"atlas_positions", positionKindName(positions)},
        {"atlas_causal", causal},
        {"atlas_architecture", architectureName(architecture())},
        {"atlas_tokenizer", tokenizer},
        {"atlas_description", description},
        {"atlas_sample", sample},
    };
    if (!task.empty())
        j["atlas_task"] = task;
    if (!specialTokens.empty()) {
        json specials = json::object();
        for (const auto &[name, id] : specialTokens)
            specials[name] = id;
        j["atlas_special_tokens"] = specials;
    }
    if (reversible)
        j["atlas_reversible"] = true;
    funnel.toJson(j);
    sinkhorn.toJson(j);
    fourier.toJson(j);
    if (normaliser != Normaliser::Softmax)
        j["atlas_attention_normaliser"] = normaliserName(normaliser);
    if (encoderLayers > 0)
        j["atlas_encoder_layers"] = encoderLayers;
    if (adaptiveSpan()) {
        j["atlas_span_ramp"] = spanRamp;
        j["atlas_span_penalty"] = shortestDecimal(spanPenalty);
    }
    act.toJson(j);
    shared.toJson(j);
    if (!decoderSample.empty())
        j["atlas_decoder_sample"] = decoderSample;
    if (rotatesQueriesAndKeys())
        j["atlas_rope_base"] = ropeBase;
    if (embeddingScale != 1.0f)
        j["atlas_embedding_scale"] = shortestDecimal(embeddingScale);
    if (positions == PositionKind::Shaw)
        j["atlas_relative_clip"] = relativeClip;
    if (positions == PositionKind::T5) {
        j["atlas_relative_buckets"] = relativeBuckets;
        j["atlas_relative_max_distance"] = relativeMaxDistance;
    }
    if (experts > 0) {
        j["atlas_experts"] = experts;
        j["atlas_expert_top_k"] = expertTopK;
        j["atlas_capacity_factor"] = shortestDecimal(capacityFactor);
        j["atlas_router_aux_loss_coef"] = shortestDecimal(routerAuxLossCoef);
        j["atlas_router_z_loss_coef"] = shortestDecimal(routerZLossCoef);
        if (!moeLayers.empty())
            j["atlas_moe_layers"] = moeLayers;
    }
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; // a byte sample may not be UTF-8
}

} // namespace atlas
