#include "model/modelconfig.h"

#include "model/configjson.h"

#include <string>

// ModelConfig::familyJson: the config.json of every family but GPT-2, as each family's Hugging Face class writes it
// (the readers are in familyconfig.cpp, and Llama's kin's own keys in llamakin.cpp).
namespace atlas {

using namespace configjson;

std::string ModelConfig::familyJson() const
{
    if (family == Family::T5) {
        json j = {
            {"model_type", "t5"},
            {"architectures", {"T5ForConditionalGeneration"}},
            {"is_encoder_decoder", true},
            {"d_model", dModel},
            {"d_kv", headDim()},
            {"num_heads", heads},
            {"num_layers", encoderLayers},
            {"num_decoder_layers", layers},
            {"d_ff", dFF},
            {"vocab_size", vocab},
            {"n_positions", context},
            {"relative_attention_num_buckets", relativeBuckets},
            {"relative_attention_max_distance", relativeMaxDistance},
            {"layer_norm_epsilon", shortestDecimal(lnEpsilon)},
            {"feed_forward_proj", (gatedFfn ? "gated-" : "") + activationName(activation)},
            {"tie_word_embeddings", tiedHead},
            {"decoder_start_token_id", decoderStart},
            {"torch_dtype", "float32"},
        };
        if (gatedFfn && activation == Activation::GeluTanh)
            j["feed_forward_proj"] = "gated-gelu"; // T5Config's name for a gelu_new gate
        for (const auto &[key, value] : {std::pair {"atlas_description", description}, {"atlas_sample", sample},
                 {"atlas_decoder_sample", decoderSample}})
            if (!value.empty())
                j[key] = value;
        return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    }
    if (family == Family::Bert) {
        json j = {
            {"model_type", "bert"},
            {"architectures", {nspHead ? "BertForPreTraining" : "BertForMaskedLM"}},
            {"hidden_size", dModel},
            {"intermediate_size", dFF},
            {"num_hidden_layers", layers},
            {"num_attention_heads", heads},
            {"vocab_size", vocab},
            {"max_position_embeddings", context},
            {"type_vocab_size", tokenTypes},
            {"layer_norm_eps", shortestDecimal(lnEpsilon)},
            {"hidden_act", activationName(activation)},
            {"position_embedding_type", positions == PositionKind::Shaw ? "relative_key" : "absolute"},
            {"torch_dtype", "float32"},
        };
        for (const auto &[key, value] :
            {std::pair {"atlas_description", description}, {"atlas_sample", sample}, {"atlas_task", task}})
            if (!value.empty())
                j[key] = value;
        if (tokenizer != "gpt2") // the project's own models read bytes; a checkpoint, the files beside it
            j["atlas_tokenizer"] = tokenizer;
        if (!specialTokens.empty()) {
            json specials = json::object();
            for (const auto &[name, id] : specialTokens)
                specials[name] = id;
            j["atlas_special_tokens"] = specials;
        }
        fourier.toJson(j);
        shared.toJson(j);
        return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    }
    if (family == Family::GptNeoX || family == Family::GptNeo) {
        const bool neox = family == Family::GptNeoX;
        json j = {
            {"model_type", modelType},
            {"architectures", {modelTypeOf(modelType, "config").architecture}},
            {"hidden_size", dModel},
            {"intermediate_size", dFF},
            {neox ? "num_hidden_layers" : "num_layers", layers},
            {neox ? "num_attention_heads" : "num_heads", heads},
            {"vocab_size", vocab},
            {"max_position_embeddings", context},
            {neox ? "layer_norm_eps" : "layer_norm_epsilon", shortestDecimal(lnEpsilon)},
            {neox ? "hidden_act" : "activation_function", activationName(activation)},
            {"tie_word_embeddings", tiedHead},
            {"torch_dtype", "float32"},
        };
        if (neox) {
            j["rotary_pct"] = double(rotatedDims()) / headDim();
            j["rotary_emb_base"] = shortestDecimal(ropeBase);
            if (ropeScaling.kind == RopeScaling::Kind::Linear)
                j["rope_scaling"] = {{"type", "linear"}, {"factor", ropeScaling.factor}};
            j["use_parallel_residual"] = parallelResidual;
            j["attention_bias"] = qkvBias;
        } else {
            json kinds = json::array();
            for (int i = 0; i < layers; ++i)
                kinds.push_back(windowed(i) ? "local" : "global");
            j["attention_types"] = json::array({json::array({kinds, 1})});
            j["window_size"] = slidingWindow > 0 ? slidingWindow : 256;
        }
        for (const auto &[key, value] : {std::pair {"atlas_description", description}, {"atlas_sample", sample}})
            if (!value.empty())
                j[key] = value;
        return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    }
    json j = {
        {"model_type", modelType},
        {"architectures", {modelTypeOf(modelType, "config").architecture}},
        {"hidden_size", dModel},
        {"intermediate_size", dFF},
        {"num_hidden_layers", layers},
        {"num_attention_heads", heads},
        {"num_key_value_heads", kvHeadCount()},
        {"vocab_size", vocab},
        {"max_position_embeddings", context},
        {"rms_norm_eps", shortestDecimal(lnEpsilon)},
        {"rope_theta", shortestDecimal(ropeBase)},
        {"hidden_act", "silu"},
        {"tie_word_embeddings", tiedHead},
        {"torch_dtype", "float32"},
    };
    writeLlamaKinKeys(*this, j);
    const RopeScaling &r = ropeScaling;
    if (r.kind == RopeScaling::Kind::None)
        j["rope_scaling"] = nullptr;
    else if (r.kind == RopeScaling::Kind::Linear)
        j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", r.factor}};
    else if (r.kind == RopeScaling::Kind::Factors)
        j["rope_scaling"] = {{"rope_type", "frequency_factors"}, {"factors", r.frequencyFactors}};
    else if (r.kind == RopeScaling::Kind::LongRope) { // the attention factor written out, as read
        j["rope_scaling"] = {{"type", "longrope"}, {"short_factor", r.shortFactors}, {"long_factor", r.longFactors},
            {"attention_factor", r.attentionFactor}};
        j["original_max_position_embeddings"] = r.originalContext;
    } else if (r.kind == RopeScaling::Kind::Yarn) {
        j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", r.factor}, {"beta_fast", r.betaFast},
            {"beta_slow", r.betaSlow}, {"original_max_position_embeddings", r.originalContext},
            {"attention_factor", r.attentionFactor}, {"truncate", r.truncate}};
    } else
        j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", r.factor}, {"low_freq_factor", r.lowFreqFactor},
            {"high_freq_factor", r.highFreqFactor}, {"original_max_position_embeddings", r.originalContext}};
    for (const auto &[key, value] :
        {std::pair {"atlas_description", description}, {"atlas_sample", sample}, {"atlas_task", task}})
        if (!value.empty())
            j[key] = value;
    if (tokenizer != "gpt2") // the project's own models read bytes; a checkpoint, the files beside it
        j["atlas_tokenizer"] = tokenizer;
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace atlas
