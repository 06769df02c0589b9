#include "model/modelconfig.h"

#include "io/jsonread.h"
#include "model/configjson.h"
#include "util/error.h"
#include "util/text.h"

#include <algorithm>
#include <string>
#include <vector>

// The config.json of GPT-NeoX, GPT-Neo, BERT and T5 (docs/models.md, "Families"): each reader with its family's
// defaults. Llama's kin are read in llamakin.cpp; ModelConfig::familyJson, which writes each layout back, is in
// familyjson.cpp.
namespace atlas {

using namespace configjson;

ModelConfig configjson::hiddenShape(
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

namespace {

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
        return llamaKinFromJson(j, type, source);
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
