#pragma once

// Internal to the core: the config.json readers shared by modelconfig.cpp (GPT-2's keys, validation, writing),
// familyconfig.cpp and llamakin.cpp (every other family's keys).

#include "model/modelconfig.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace atlas::configjson {

using nlohmann::json;

// Each integer key's range, checked before the value is converted or used (a 2^40 must not wrap to 0). The
// upper bounds keep every product the engine forms of two of them (vocab_size · n_embd, n_embd · n_inner …)
// well inside a 64-bit index, and are far above any model this app can run.
struct IntKey
{
    const char *key;
    int64_t minimum, maximum;
};
inline constexpr IntKey kLayers {"n_layer", 1, 256}, kHeads {"n_head", 1, 1024}, kEmbd {"n_embd", 1, 65536},
    kInner {"n_inner", 1, 1 << 20}, kVocab {"vocab_size", 1, 1 << 24}, kPositions {"n_positions", 1, 1 << 20},
    kCtx {"n_ctx", 1, 1 << 20}, kClip {"atlas_relative_clip", 1, 4096}, kBuckets {"atlas_relative_buckets", 2, 4096},
    kMaxDistance {"atlas_relative_max_distance", 2, 1 << 20}, kExperts {"atlas_experts", 0, 1024},
    kTopK {"atlas_expert_top_k", 1, 1024}, kEncoderLayers {"atlas_encoder_layers", 0, 256},
    kSpanRamp {"atlas_span_ramp", 0, 65536};

// The shape keys the other families share (Hugging Face's PretrainedConfig names), with the same ranges as GPT-2's.
inline constexpr IntKey kHidden {"hidden_size", 1, 65536}, kHiddenLayers {"num_hidden_layers", 1, 256},
    kAttentionHeads {"num_attention_heads", 1, 1024}, kIntermediate {"intermediate_size", 1, 1 << 20},
    kMaxPositions {"max_position_embeddings", 1, 1 << 24};

// A key's value, or `fallback` when the key is absent or null; atlas::Error naming `source` and the key otherwise
// (io/jsonread.h's readers, in config.json's terms).
int readInt(const json &j, const IntKey &k, int64_t fallback, const std::string &source);
std::string readString(const json &j, const char *key, const std::string &fallback, const std::string &source);
bool readBool(const json &j, const char *key, bool fallback, const std::string &source);
Activation parseActivation(const std::string &s, const char *key, const std::string &source); // key: the one read
std::string activationName(Activation a);
// The shortest decimal that reads back as `value`: 0.01f is written 0.01, not 0.009999999776482582.
double shortestDecimal(float value);
// atlas_special_tokens: {"[MASK]": 256, …}, sorted by id into c.specialTokens (checked against the vocabulary by
// validate).
void readSpecialTokens(const json &j, ModelConfig &c, const std::string &source);
// The keys a family's config.json cannot do without (its shape).
void requireKeys(
    const json &j, std::initializer_list<const char *> keys, const std::string &modelType, const std::string &source);

// The model_type values this app reads, each with the family whose layout it has.
struct ModelType
{
    const char *name;
    Family family;
    const char *architecture; // for config.json's "architectures"
    // llama.cpp's name of it, a GGUF file's general.architecture ("llama" for Mistral and Mixtral too); "" where
    // llama.cpp has none that this app reads (GPT-Neo, BERT, T5).
    const char *gguf;
};
const ModelType &modelTypeOf(const std::string &name, const std::string &source);
// "gpt2, llama, mistral, …": every model_type this app reads, for messages.
std::string knownModelTypes();

// Every family but GPT-2's config.json (familyconfig.cpp), validated.
ModelConfig familyFromJson(const json &j, const ModelType &type, const std::string &source);
// The shape every Hugging Face family with these key names shares: the four required keys, then the width, depth,
// heads, feed-forward width and vocabulary (with the family's default vocabulary).
ModelConfig hiddenShape(
    const json &j, Family family, const std::string &modelType, int defaultVocab, const std::string &source);
// Llama's kin (llamakin.cpp: llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, olmo2, gemma2, gemma3_text, smollm3,
// phi3, gpt_oss), each model type with its config class's defaults and its own keys: read and validated, and written
// back as that class writes it (the keys it adds to Llama's, into `j`).
ModelConfig llamaKinFromJson(const json &j, const ModelType &type, const std::string &source);
void writeLlamaKinKeys(const ModelConfig &c, json &j);
// Whether a model type of Llama's kin routes each token to experts (false for any other name).
bool llamaKinHasExperts(const std::string &modelType);

// `j`'s rope_scaling (ropeconfig.cpp): none, linear, llama3, or LongRoPE (longrope, su) when `positions`, the
// max_position_embeddings read, is given; named in messages as `key`. Another kind is refused by name.
RopeScaling readRopeScaling(const json &j, const std::string &source, const std::string &key = "rope_scaling",
    const std::string &modelType = "", int positions = 0);
// transformers 5's rope_parameters (flat, or per kind of layer) read as the rope_theta, rope_scaling and
// rope_local_base_freq it replaced; `scalingKey` is set to where the scaling was written, for messages.
json withRopeParametersRead(const json &j, const std::string &source, std::string &scalingKey);

} // namespace atlas::configjson
