#include "model/modelconfig.h"

#include "util/error.h"

#include <nlohmann/json.hpp>

namespace atlas {

namespace {

using nlohmann::json;

int readInt(const json &j, const char *key, int fallback, const std::string &source)
{
    if (!j.contains(key) || j[key].is_null())
        return fallback;
    if (!j[key].is_number_integer())
        throw Error(source + ": key '" + key + "' must be an integer");
    return j[key].get<int>();
}

std::string readString(const json &j, const char *key, const std::string &fallback, const std::string &source)
{
    if (!j.contains(key) || j[key].is_null())
        return fallback;
    if (!j[key].is_string())
        throw Error(source + ": key '" + key + "' must be a string");
    return j[key].get<std::string>();
}

Activation parseActivation(const std::string &s, const std::string &source)
{
    if (s == "gelu_new" || s == "gelu_pytorch_tanh" || s == "gelu_fast")
        return Activation::GeluTanh;
    if (s == "gelu")
        return Activation::GeluErf;
    if (s == "relu")
        return Activation::Relu;
    throw Error(
        source + ": key 'activation_function': unsupported value '" + s + "' (expected gelu_new, gelu or relu)");
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
    }
    return "gelu_new";
}

} // namespace

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

void ModelConfig::validate(const std::string &source) const
{
    auto require = [&](bool ok, const std::string &what) {
        if (!ok)
            throw Error(source + ": " + what);
    };
    require(layers >= 1 && layers <= 256, "n_layer must be in 1..256, is " + std::to_string(layers));
    require(heads >= 1, "n_head must be at least 1, is " + std::to_string(heads));
    require(dModel >= 1 && dModel % heads == 0,
        "n_embd (" + std::to_string(dModel) + ") must be a positive multiple of n_head (" + std::to_string(heads)
            + ")");
    require(dFF >= 1, "n_inner must be at least 1");
    require(vocab >= 1, "vocab_size must be at least 1");
    require(context >= 1, "n_positions must be at least 1");
    require(lnEpsilon > 0, "layer_norm_epsilon must be positive");
    require(tokenizer == "bytes" || tokenizer == "gpt2", "atlas_tokenizer must be 'bytes' or 'gpt2'");
    require(tokenizer != "bytes" || vocab >= 256, "a byte-level tokenizer needs vocab_size >= 256");
    require(!reversible || layerNorm == LayerNormPlacement::Pre,
        "atlas_reversible needs atlas_layer_norm 'pre' (a reversible block normalises the input of F and G)");
}

ModelConfig ModelConfig::fromJson(const std::string &text, const std::string &source)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error &e) {
        throw Error(source + ": not valid JSON: " + e.what());
    }
    if (!j.is_object())
        throw Error(source + ": expected a JSON object");
    ModelConfig c;
    c.layers = readInt(j, "n_layer", c.layers, source);
    c.heads = readInt(j, "n_head", c.heads, source);
    c.dModel = readInt(j, "n_embd", c.dModel, source);
    c.dFF = readInt(j, "n_inner", 4 * c.dModel, source);
    c.vocab = readInt(j, "vocab_size", c.vocab, source);
    c.context = readInt(j, "n_positions", readInt(j, "n_ctx", c.context, source), source);
    if (j.contains("layer_norm_epsilon")) {
        if (!j["layer_norm_epsilon"].is_number())
            throw Error(source + ": key 'layer_norm_epsilon' must be a number");
        c.lnEpsilon = j["layer_norm_epsilon"].get<float>();
    }
    c.activation = parseActivation(readString(j, "activation_function", "gelu_new", source), source);
    const std::string ln = readString(j, "atlas_layer_norm", "pre", source);
    if (ln != "pre" && ln != "post")
        throw Error(source + ": key 'atlas_layer_norm' must be 'pre' or 'post'");
    c.layerNorm = ln == "pre" ? LayerNormPlacement::Pre : LayerNormPlacement::Post;
    const std::string pos = readString(j, "atlas_positions", "learned", source);
    if (pos != "learned" && pos != "sinusoidal")
        throw Error(source + ": key 'atlas_positions' must be 'learned' or 'sinusoidal'");
    c.positions = pos == "learned" ? PositionKind::Learned : PositionKind::Sinusoidal;
    if (j.contains("atlas_causal") && !j["atlas_causal"].is_boolean())
        throw Error(source + ": key 'atlas_causal' must be true or false");
    c.causal = j.value("atlas_causal", true);
    if (j.contains("atlas_reversible") && !j["atlas_reversible"].is_boolean())
        throw Error(source + ": key 'atlas_reversible' must be true or false");
    c.reversible = j.value("atlas_reversible", false);
    c.tokenizer = readString(j, "atlas_tokenizer", "gpt2", source);
    c.description = readString(j, "atlas_description", "", source);
    c.sample = readString(j, "atlas_sample", "", source);
    c.validate(source);
    return c;
}

std::string ModelConfig::toJson() const
{
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
        {"tie_word_embeddings", true},
        {"atlas_layer_norm", layerNorm == LayerNormPlacement::Pre ? "pre" : "post"},
        {"atlas_positions", positions == PositionKind::Learned ? "learned" : "sinusoidal"},
        {"atlas_causal", causal},
        {"atlas_tokenizer", tokenizer},
        {"atlas_description", description},
        {"atlas_sample", sample},
    };
    if (reversible)
        j["atlas_reversible"] = true;
    return j.dump(2) + "\n";
}

} // namespace atlas
