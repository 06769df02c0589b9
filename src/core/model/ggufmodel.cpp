#include "model/ggufmodel.h"

#include "io/atomicfile.h"
#include "io/gguf.h"
#include "model/configjson.h"
#include "model/gguflayout.h"
#include "model/parameterbinding.h"
#include "model/parameternames.h"
#include "tensor/packedrows.h"
#include "util/error.h"
#include "util/memorycheck.h"
#include "util/text.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

namespace atlas {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Phi-3's LongRoPE factors, one tensor each for the whole model (llama.cpp's ROPE_FACTORS_LONG and _SHORT).
constexpr const char *kPhi3LongFactors = "rope_factors_long.weight", *kPhi3ShortFactors = "rope_factors_short.weight";

// The architectures read, each with the model_type its files become.
struct GgufArchitecture
{
    const char *gguf;
    const char *modelType;
};
constexpr std::array kArchitectures = {
    GgufArchitecture {"llama", "llama"}, // Mistral's files too; "mixtral" when it has experts
    GgufArchitecture {"qwen2", "qwen2"},
    GgufArchitecture {"qwen3", "qwen3"},
    GgufArchitecture {"qwen3moe", "qwen3_moe"},
    GgufArchitecture {"olmo2", "olmo2"},
    GgufArchitecture {"smollm3", "smollm3"},
    GgufArchitecture {"gemma2", "gemma2"},
    GgufArchitecture {"gemma3", "gemma3_text"},
    GgufArchitecture {"phi3", "phi3"},
    GgufArchitecture {"gpt2", "gpt2"},
    GgufArchitecture {"mpt", "gpt2"}, // GPT-2's block with ALiBi
    GgufArchitecture {"gptneox", "gpt_neox"},
    GgufArchitecture {"gpt-oss", "gpt_oss"},
};

std::string readArchitectures()
{
    std::string names;
    for (const GgufArchitecture &a : kArchitectures)
        names += (names.empty() ? "" : ", ") + std::string(a.gguf);
    return names;
}

// llama.cpp's architectures of the families this program opens from other files, and why their GGUF files are not
// read: its encoders are sentence-embedding models, written without the masked-LM head that gives logits.
struct UnreadArchitecture
{
    const char *gguf;
    const char *why;
};
constexpr const char *kEmbeddingModel = "llama.cpp's encoder files are sentence-embedding models, written without a "
                                        "masked-LM head, so they have no logits to show; BertForMaskedLM checkpoints "
                                        "open from their Hugging Face directories";
constexpr std::array kUnreadArchitectures = {
    UnreadArchitecture {"bert", kEmbeddingModel},
    UnreadArchitecture {"nomic-bert", kEmbeddingModel},
    UnreadArchitecture {"jina-bert-v2", kEmbeddingModel},
    UnreadArchitecture {"modern-bert", kEmbeddingModel},
    UnreadArchitecture {"t5encoder", "a T5 encoder alone has no logits to show"},
    UnreadArchitecture {"t5",
        "llama.cpp's T5 files are not read yet; T5ForConditionalGeneration checkpoints open from their Hugging Face "
        "directories"},
};

const GgufArchitecture &architectureOf(const GgufFile &f)
{
    const std::string &name = f.string("general.architecture");
    for (const GgufArchitecture &a : kArchitectures)
        if (name == a.gguf)
            return a;
    std::string why;
    for (const UnreadArchitecture &a : kUnreadArchitectures)
        if (name == a.gguf)
            why = std::string(": ") + a.why;
    throw Error(f.path() + ": metadata key 'general.architecture': '" + shownText(name)
        + "' is not an architecture this program reads (it reads " + readArchitectures() + ")" + why);
}

// The shape of the tensor `name` ([rows, columns]), or the error that it is missing.
const GgufFile::Entry &requiredTensor(const GgufFile &f, const std::string &name, const std::string &why)
{
    const GgufFile::Entry *e = f.find(name);
    if (!e)
        throw Error(f.path() + ": tensor '" + name + "' is missing (" + why + ")");
    return *e;
}

[[noreturn]] void keyFails(const GgufFile &f, const std::string &key, const std::string &reason)
{
    throw Error(f.path() + ": metadata key '" + key + "': " + reason);
}

// A count key, within [1, max].
int64_t countKey(const GgufFile &f, const std::string &key, int64_t max = int64_t(1) << 30)
{
    const uint64_t v = f.unsignedValue(key);
    if (v < 1 || v > uint64_t(max))
        keyFails(f, key, std::to_string(v) + " is outside [1, " + std::to_string(max) + "]");
    return int64_t(v);
}

const GgufFile::Entry &embeddingOf(const GgufFile &f)
{
    const GgufFile::Entry &embedding = requiredTensor(f, "token_embd.weight", "every model has its embedding");
    if (embedding.shape.size() != 2)
        throw Error(f.path() + ": tensor 'token_embd.weight' has shape " + Tensor::shapeString(embedding.shape)
            + ", not [vocabulary, embedding_length]");
    return embedding;
}

// GPT2Config's keys (GPT2Model's converter writes feed_forward_length as 4 · n_embd, GPT-2's inner width), from a
// gpt2 file or an mpt one. llama.cpp's mpt is GPT-2's block whose scores a file's attention.max_alibi_bias turns into
// ALiBi's (ggml's slopes are Press et al.'s for a maximum of 8), its position table optional.
json gpt2ConfigJson(const GgufFile &f, const std::string &a)
{
    const auto key = [&a](const char *suffix) { return a + "." + suffix; };
    json j = {{"model_type", "gpt2"}, {"n_layer", countKey(f, key("block_count"), 1 << 16)},
        {"n_head", countKey(f, key("attention.head_count"), 1 << 16)}, {"n_embd", countKey(f, key("embedding_length"))},
        {"n_inner", countKey(f, key("feed_forward_length"))}, {"n_positions", countKey(f, key("context_length"))},
        {"vocab_size", embeddingOf(f).shape[0]}, {"layer_norm_epsilon", f.number(key("attention.layer_norm_epsilon"))},
        {"activation_function", "gelu_new"}, {"tie_word_embeddings", f.find("output.weight") == nullptr}};
    if (a != "mpt")
        return j;
    if (f.has(key("attention.clamp_kqv")))
        keyFails(f, key("attention.clamp_kqv"), "clamping q, k and v is not read");
    if (f.has(key("attention.head_count_kv")) && countKey(f, key("attention.head_count_kv"), 1 << 16) != j["n_head"])
        keyFails(f, key("attention.head_count_kv"), "grouped K/V heads in an mpt file are not read");
    const double maxBias = f.has(key("attention.max_alibi_bias")) ? f.number(key("attention.max_alibi_bias")) : 0.0;
    const bool table = f.find("position_embd.weight") != nullptr;
    if (maxBias != 0 && maxBias != 8)
        keyFails(f, key("attention.max_alibi_bias"),
            json(maxBias).dump() + " is not read: ALiBi's slopes here are Press et al.'s, 2^(−8h/n), a maximum of 8");
    if (maxBias != 0 && table)
        keyFails(f, key("attention.max_alibi_bias"),
            "ALiBi together with a position_embd table is not read (a model has one kind of positions here)");
    j["atlas_positions"] = maxBias != 0 ? "alibi" : table ? "learned" : "none";
    return j;
}

// GPT-NeoX's erf GELU, or the one a file `save` wrote says (kGgufGeluKey).
std::string neoxActivation(const GgufFile &f)
{
    if (!f.has(kGgufGeluKey))
        return "gelu";
    const std::string gelu = f.string(kGgufGeluKey);
    if (gelu != "tanh" && gelu != "erf")
        keyFails(f, kGgufGeluKey, "'" + shownText(gelu) + "' is not a GELU (tanh or erf)");
    return gelu == "tanh" ? "gelu_new" : "gelu";
}

// GPTNeoXConfig's keys: rotary_pct from rope.dimension_count, the residual from use_parallel_residual.
json neoxConfigJson(const GgufFile &f)
{
    const auto key = [](const char *suffix) { return std::string("gptneox.") + suffix; };
    const int64_t dModel = countKey(f, key("embedding_length")),
                  heads = countKey(f, key("attention.head_count"), 1 << 16);
    const int64_t rotary
        = f.has(key("rope.dimension_count")) ? countKey(f, key("rope.dimension_count"), 1 << 16) : dModel / heads;
    return {{"model_type", "gpt_neox"}, {"hidden_size", dModel}, {"num_attention_heads", heads},
        {"num_hidden_layers", countKey(f, key("block_count"), 1 << 16)},
        {"intermediate_size", countKey(f, key("feed_forward_length"))},
        {"max_position_embeddings", countKey(f, key("context_length"))}, {"vocab_size", embeddingOf(f).shape[0]},
        {"layer_norm_eps", f.number(key("attention.layer_norm_epsilon"))},
        {"rotary_pct", double(rotary) / double(dModel / heads)},
        {"rotary_emb_base", f.has(key("rope.freq_base")) ? f.number(key("rope.freq_base")) : 10000.0},
        {"use_parallel_residual", !f.has(key("use_parallel_residual")) || f.boolean(key("use_parallel_residual"))},
        {"hidden_act", neoxActivation(f)}, {"tie_word_embeddings", f.find("output.weight") == nullptr},
        {"attention_bias", f.find("blk.0.attn_qkv.bias") != nullptr}};
}

// Gemma 2's and 3's keys as llama.cpp reads them (llama_model_gemma2, _gemma3): the scores scaled by 1/√head_dim (by
// 1/√(d_model/heads) in the 27B models, told by their layer count) whatever query_pre_attn_scalar the checkpoint had,
// since the file does not hold it; a sliding window on the layers of attention.sliding_window_pattern (a count n:
// layer i is local when i mod n < n − 1; or a list of flags), 2 for Gemma 2 and 6 for Gemma 3 when absent.
void gemmaKeys(const GgufFile &f, const std::string &a, json &j)
{
    const auto key = [&](const char *suffix) { return a + "." + suffix; };
    const bool gemma2 = a == "gemma2";
    const int64_t layers = j["num_hidden_layers"], heads = j["num_attention_heads"], dModel = j["hidden_size"];
    const bool large = layers == (gemma2 ? 46 : 62);
    j["query_pre_attn_scalar"] = large ? dModel / heads : j.value("head_dim", dModel / heads);
    j["hidden_activation"] = j["hidden_act"] = "gelu_pytorch_tanh";
    j["attention_bias"] = false;
    if (gemma2) // llama.cpp's gemma2 reads the head from the embedding: an output tensor has no place
        j["tie_word_embeddings"] = true;
    j["attn_logit_softcapping"]
        = gemma2 && f.has(key("attn_logit_softcapping")) ? json(f.number(key("attn_logit_softcapping"))) : json();
    j["final_logit_softcapping"]
        = f.has(key("final_logit_softcapping")) ? json(f.number(key("final_logit_softcapping"))) : json();
    const bool windowed = gemma2 || f.has(key("attention.sliding_window"));
    j["sliding_window"] = !windowed              ? json()
        : f.has(key("attention.sliding_window")) ? json(countKey(f, key("attention.sliding_window")))
                                                 : json(4096); // Gemma 2's default in llama.cpp
    std::vector<bool> local(size_t(layers), false);
    if (windowed) {
        const std::string patternKey = key("attention.sliding_window_pattern");
        if (f.has(patternKey) && f.metadata().at(patternKey).type == GgufValue::Type::Array) {
            const std::vector<int64_t> flags = f.integers(patternKey);
            if (flags.size() != size_t(layers))
                keyFails(
                    f, patternKey, std::to_string(flags.size()) + " flags for " + std::to_string(layers) + " layers");
            for (size_t i = 0; i < flags.size(); ++i)
                local[i] = flags[i] != 0;
        } else {
            const int64_t n = f.has(patternKey) ? countKey(f, patternKey, 1 << 16) : gemma2 ? 2 : 6;
            for (int64_t i = 0; i < layers; ++i)
                local[size_t(i)] = i % n < n - 1;
        }
    }
    json types = json::array();
    for (bool l : local)
        types.push_back(l ? "sliding_attention" : "full_attention");
    j["layer_types"] = types;
    if (!gemma2)
        j["rope_local_base_freq"]
            = f.has(key("rope.freq_base_swa")) ? f.number(key("rope.freq_base_swa")) : j["rope_theta"].get<double>();
}

// Phi-3's (llama.cpp's phi3, as its converter writes it): LongRoPE's factors as the tensors rope_factors_long and
// rope_factors_short, with rope.scaling.original_context_length and rope.scaling.attn_factor. As llama.cpp, no
// sliding window (its phi3 turns the window off, whatever attention.sliding_window says).
void phi3Keys(const GgufFile &f, json &j)
{
    j["sliding_window"] = nullptr;
    const bool longFactors = f.find(kPhi3LongFactors) != nullptr, shortFactors = f.find(kPhi3ShortFactors) != nullptr;
    if (!longFactors && !shortFactors)
        return;
    if (!longFactors || !shortFactors)
        throw Error(f.path() + ": tensor '" + (longFactors ? kPhi3LongFactors : kPhi3ShortFactors) + "' without '"
            + (longFactors ? kPhi3ShortFactors : kPhi3LongFactors) + "': LongRoPE needs both lists of factors");
    const auto factors = [&](const char *name) {
        const Tensor t = f.tensor(name, SafetensorsFile::NonFinite::Refuse);
        if (t.rank() != 1)
            throw Error(f.path() + ": tensor '" + name + "' has shape " + t.shapeString()
                + ": LongRoPE's factors are one list, one per rotated pair");
        return std::vector<double>(t.values().begin(), t.values().end());
    };
    const std::string original = "phi3.rope.scaling.original_context_length";
    j["original_max_position_embeddings"]
        = f.has(original) ? countKey(f, original) : j["max_position_embeddings"].get<int64_t>();
    j["rope_scaling"] = {
        {"type", "longrope"}, {"long_factor", factors(kPhi3LongFactors)}, {"short_factor", factors(kPhi3ShortFactors)}};
    if (f.has("phi3.rope.scaling.attn_factor"))
        j["rope_scaling"]["attention_factor"] = f.number("phi3.rope.scaling.attn_factor");
}

// gpt-oss's (llama.cpp's gpt-oss, as GptOssModel converts it): a window of attention.sliding_window on the layers of
// attention.sliding_window_pattern (even ones when absent), YaRN from rope.scaling.* (none without them) with its ramp
// floored and ceiled to whole pairs (llama.cpp's ggml_rope_yarn_corr_dims: transformers' truncate true, where gpt-oss's
// own config says false), and the experts' clamp at 7 (llama.cpp's constant: the file holds no swiglu_limit).
void gptOssKeys(const GgufFile &f, json &j)
{
    const auto key = [](const char *suffix) { return std::string("gpt-oss.") + suffix; };
    const int64_t layers = j["num_hidden_layers"];
    j["sliding_window"] = countKey(f, key("attention.sliding_window"));
    const std::string patternKey = key("attention.sliding_window_pattern");
    json types = json::array();
    if (f.has(patternKey) && f.metadata().at(patternKey).type == GgufValue::Type::Array) {
        const std::vector<int64_t> flags = f.integers(patternKey);
        if (flags.size() != size_t(layers))
            keyFails(f, patternKey, std::to_string(flags.size()) + " flags for " + std::to_string(layers) + " layers");
        for (int64_t flag : flags)
            types.push_back(flag != 0 ? "sliding_attention" : "full_attention");
    } else {
        const int64_t n = f.has(patternKey) ? countKey(f, patternKey, 1 << 16) : 2;
        for (int64_t i = 0; i < layers; ++i)
            types.push_back(i % n < n - 1 ? "sliding_attention" : "full_attention");
    }
    j["layer_types"] = types;
    j["swiglu_limit"] = 7.0;
    j["attention_bias"] = true;
    j["num_local_experts"] = countKey(f, key("expert_count"), 1 << 12);
    j["num_experts_per_tok"] = countKey(f, key("expert_used_count"), 1 << 12);
    if (f.has(key("expert_feed_forward_length")))
        j["intermediate_size"] = countKey(f, key("expert_feed_forward_length"));
    for (const char *unread : {"rope.scaling.yarn_attn_factor", "rope.scaling.yarn_ext_factor", "rope.freq_base_swa"})
        if (f.has(key(unread)))
            keyFails(f, key(unread), "is not read (gpt-oss's converter does not write it)");
    // Without rope.scaling.type llama.cpp turns by the base frequencies alone, where GptOssConfig's default is YaRN
    j["rope_scaling"] = nullptr;
    if (!f.has(key("rope.scaling.type")))
        return;
    const std::string &kind = f.string(key("rope.scaling.type"));
    if (kind == "none")
        return;
    if (kind != "yarn")
        keyFails(f, key("rope.scaling.type"), "'" + shownText(kind) + "' is not read (yarn and none are)");
    json yarn = {{"rope_type", "yarn"}, {"factor", f.number(key("rope.scaling.factor"))}, {"truncate", true},
        {"original_max_position_embeddings", countKey(f, key("rope.scaling.original_context_length"))}};
    if (f.has(key("rope.scaling.yarn_beta_fast")))
        yarn["beta_fast"] = f.number(key("rope.scaling.yarn_beta_fast"));
    if (f.has(key("rope.scaling.yarn_beta_slow")))
        yarn["beta_slow"] = f.number(key("rope.scaling.yarn_beta_slow"));
    j["rope_scaling"] = yarn;
}

// config.json's keys from the file's metadata, as the family's Hugging Face config would hold them.
json configJson(const GgufFile &f, const GgufArchitecture &arch)
{
    const std::string a = arch.gguf;
    if (a == "gpt2" || a == "mpt")
        return gpt2ConfigJson(f, a);
    if (a == "gptneox")
        return neoxConfigJson(f);
    const auto key = [&](const char *suffix) { return a + "." + suffix; };
    const GgufFile::Entry &embedding = embeddingOf(f);
    json j;
    j["model_type"] = arch.modelType;
    j["hidden_size"] = countKey(f, key("embedding_length"));
    j["num_hidden_layers"] = countKey(f, key("block_count"), 1 << 16);
    const int64_t heads = countKey(f, key("attention.head_count"), 1 << 16);
    j["num_attention_heads"] = heads;
    j["num_key_value_heads"]
        = f.has(key("attention.head_count_kv")) ? countKey(f, key("attention.head_count_kv"), 1 << 16) : heads;
    j["max_position_embeddings"] = countKey(f, key("context_length"));
    j["rms_norm_eps"] = f.number(key("attention.layer_norm_rms_epsilon"));
    j["rope_theta"] = f.has(key("rope.freq_base")) ? f.number(key("rope.freq_base")) : 10000.0;
    j["vocab_size"] = embedding.shape[0];
    j["tie_word_embeddings"] = f.find("output.weight") == nullptr;
    j["hidden_act"] = "silu";
    const int64_t dModel = j["hidden_size"];
    int64_t headDim = dModel / heads;
    if (f.has(key("attention.key_length"))) {
        headDim = countKey(f, key("attention.key_length"), 1 << 16);
        if (f.has(key("attention.value_length")) && countKey(f, key("attention.value_length"), 1 << 16) != headDim)
            keyFails(f, key("attention.value_length"),
                "differs from attention.key_length (" + std::to_string(headDim)
                    + "): heads whose values are another width than their keys are not read");
        j["head_dim"] = headDim;
    }
    const int64_t rotated
        = f.has(key("rope.dimension_count")) ? countKey(f, key("rope.dimension_count"), 1 << 16) : headDim;
    if (a == "phi3" && rotated < headDim) // Phi-3.5's and Phi-4-mini's partial_rotary_factor
        j["partial_rotary_factor"] = double(rotated) / double(headDim);
    else if (rotated != headDim)
        keyFails(f, key("rope.dimension_count"),
            std::to_string(rotated) + " rotated dimensions of a head's " + std::to_string(headDim) + ": a " + a
                + " model turns " + (a == "phi3" ? "at most " : "") + "the whole head");
    if (f.has(key("rope.scaling.type")) && a != "gpt-oss") { // gpt-oss's YaRN: gptOssKeys
        const std::string &kind = f.string(key("rope.scaling.type"));
        if (kind == "linear")
            j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", f.number(key("rope.scaling.factor"))}};
        else if (kind != "none")
            keyFails(f, key("rope.scaling.type"), "'" + shownText(kind) + "' is not read (linear and none are)");
    }
    const bool attentionBias = f.find("blk.0.attn_q.bias") != nullptr;
    if (a == "smollm3") { // llama.cpp's: no RoPE in every fourth layer (n_no_rope_layer_step), no sliding window
        json flags = json::array();
        for (int64_t i = 0; i < j["num_hidden_layers"].get<int64_t>(); ++i)
            flags.push_back((i + 1) % 4 != 0 ? 1 : 0);
        j["no_rope_layers"] = flags;
        j["use_sliding_window"] = false;
    }
    if (a == "llama" || a == "smollm3") {
        j["attention_bias"] = attentionBias;
        j["mlp_bias"] = f.find("blk.0.ffn_up.bias") != nullptr;
    }
    if (a == "qwen3" || a == "qwen3moe")
        j["attention_bias"] = false; // llama.cpp's Qwen3 has none
    if (a == "olmo2")
        j["attention_bias"] = attentionBias;
    if (a == "gemma2" || a == "gemma3")
        gemmaKeys(f, a, j);
    if (a == "phi3")
        phi3Keys(f, j);
    if (a == "gpt-oss") {
        j["intermediate_size"] = countKey(f, key("feed_forward_length"));
        gptOssKeys(f, j);
        return j;
    }
    const int64_t experts = f.has(key("expert_count")) ? int64_t(f.unsignedValue(key("expert_count"))) : 0;
    if (a == "qwen3moe" || experts > 0) {
        if (a == "llama")
            j["model_type"] = "mixtral";
        j[a == "llama" ? "num_local_experts" : "num_experts"] = countKey(f, key("expert_count"), 1 << 12);
        j["num_experts_per_tok"] = countKey(f, key("expert_used_count"), 1 << 12);
    }
    if (a == "qwen3moe") {
        j["moe_intermediate_size"] = countKey(f, key("expert_feed_forward_length"));
        j["intermediate_size"] = f.has(key("feed_forward_length")) ? countKey(f, key("feed_forward_length"))
                                                                   : j["moe_intermediate_size"].get<int64_t>();
        j["norm_topk_prob"] = true; // llama.cpp's qwen3moe always renormalises the chosen experts' weights
    } else {
        j["intermediate_size"] = countKey(f, key("feed_forward_length"));
    }
    if (f.find("rope_freqs.weight")) { // Llama 3's scaling, as llama.cpp holds it
        const Tensor factors = f.tensor("rope_freqs.weight", SafetensorsFile::NonFinite::Refuse);
        j["rope_scaling"] = {{"rope_type", "frequency_factors"}, {"factors", factors.values()}};
    }
    return j;
}

// gpt-oss's parameters that llama.cpp holds otherwise: self_attn.sinks from attn_sinks.weight, and the stacked
// experts from its per-matrix tensors: mlp.experts.gate_up_proj [E, D, 2F] (x W, the gate in the even columns) from
// ffn_gate_exps and ffn_up_exps [E, F, D], its bias [E, 2F] from theirs [E, F], down_proj [E, F, D] from
// ffn_down_exps [E, D, F], and its bias as it is; the matrices kept in the file's blocks when quantized, restacked as
// float32 otherwise (or when gate and up differ in type). `name` is the parameter's; nothing for the others.
std::optional<Tensor> gptOssTensor(const GgufFile &f, const std::string &name, std::set<std::string> &used)
{
    const size_t layerAt = name.find('.') + 1, at = name.find(".mlp.experts.");
    const auto read = [&](const std::string &key) {
        requiredTensor(f, key, "every gpt-oss layer has it");
        used.insert(key);
        return f.tensor(key, SafetensorsFile::NonFinite::Refuse);
    };
    if (name.ends_with(".self_attn.sinks"))
        return read("blk." + name.substr(layerAt, name.find('.', layerAt) - layerAt) + ".attn_sinks.weight");
    if (at == std::string::npos)
        return std::nullopt;
    const std::string blk = "blk." + name.substr(layerAt, at - layerAt) + ".", matrix = name.substr(at + 13);
    if (matrix == "down_proj_bias")
        return read(blk + "ffn_down_exps.bias");
    // A quantized file's experts stay in its blocks: each expert's Wᵀ as rows (gate and up interleaved), read as
    // the transposed stacks gpt-oss's layout names (PackedRows::asTransposedStacks).
    const auto packable = [&](const std::string &key) {
        const GgufFile::Entry &e = requiredTensor(f, key, "every gpt-oss layer has it");
        return e.type != GgmlType::F32 && e.shape.size() == 3;
    };
    const auto packed = [&](const std::string &key) {
        used.insert(key);
        return f.packedTensor(key);
    };
    if (matrix == "down_proj" && packable(blk + "ffn_down_exps.weight")) {
        const Tensor down = packed(blk + "ffn_down_exps.weight"); // [E, D, F]: E stacks of D rows
        return Tensor::packed(down.packing()->asTransposedStacks(f.find(blk + "ffn_down_exps.weight")->shape[0]));
    }
    if (matrix == "gate_up_proj" && packable(blk + "ffn_gate_exps.weight") && packable(blk + "ffn_up_exps.weight")
        && f.find(blk + "ffn_gate_exps.weight")->type == f.find(blk + "ffn_up_exps.weight")->type) {
        const Tensor gate = packed(blk + "ffn_gate_exps.weight"), up = packed(blk + "ffn_up_exps.weight");
        const int64_t experts = f.find(blk + "ffn_gate_exps.weight")->shape[0];
        return Tensor::packed(PackedRows::interleaved(*gate.packing(), *up.packing())->asTransposedStacks(experts));
    }
    if (matrix == "down_proj") {
        const Tensor down = read(blk + "ffn_down_exps.weight");
        if (down.rank() != 3)
            throw Error(f.path() + ": tensor '" + blk + "ffn_down_exps.weight' has shape " + down.shapeString()
                + ", not [experts, embedding_length, expert_feed_forward_length]");
        const int64_t E = down.dim(0), D = down.dim(1), F = down.dim(2);
        Tensor out = Tensor::uninitialized({E, F, D});
        for (int64_t e = 0; e < E; ++e) // each expert's [D, F] transposed
            out.slice(e) = down.slice(e).transpose();
        return out;
    }
    const bool bias = matrix == "gate_up_proj_bias";
    if (!bias && matrix != "gate_up_proj")
        return std::nullopt;
    const std::string suffix = bias ? ".bias" : ".weight";
    const Tensor gate = read(blk + "ffn_gate_exps" + suffix), up = read(blk + "ffn_up_exps" + suffix);
    if (gate.shape() != up.shape() || gate.rank() != (bias ? 2 : 3))
        throw Error(f.path() + ": tensors '" + blk + "ffn_gate_exps" + suffix + "' " + gate.shapeString() + " and '"
            + blk + "ffn_up_exps" + suffix + "' " + up.shapeString() + " are not two stacks of one shape");
    const int64_t E = gate.dim(0), F = gate.dim(1), D = bias ? 1 : gate.dim(2);
    Tensor out = Tensor::uninitialized(bias ? Shape {E, 2 * F} : Shape {E, D, 2 * F});
    for (int64_t e = 0; e < E; ++e)
        for (int64_t k = 0; k < F; ++k)
            for (int64_t d = 0; d < D; ++d) {
                float *cell = out.data() + (e * D + d) * 2 * F + 2 * k;
                cell[0] = gate.data()[(e * F + k) * D + d];
                cell[1] = up.data()[(e * F + k) * D + d];
            }
    return out;
}

// The expert number in a parameter's name ("layers.0.block_sparse_moe.experts.3.w1.weight" gives 3).
int expertOf(const std::string &name)
{
    const size_t at = name.find(".experts.");
    return at == std::string::npos ? -1 : std::stoi(name.substr(at + 9));
}

} // namespace

bool isGgufFile(const std::string &path)
{
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        return false;
    if (fs::path(path).extension() == ".gguf")
        return true;
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    return in.read(magic, 4) && std::string(magic, 4) == "GGUF";
}

ModelConfig ggufModelConfig(const GgufFile &file)
{
    const GgufArchitecture &arch = architectureOf(file);
    const json j = configJson(file, arch);
    const std::string source = file.path() + " (its metadata read as a " + arch.modelType + " config.json)";
    return ModelConfig::fromJson(j.dump(), source);
}

std::string ggufFileTypeName(uint64_t t)
{
    // llama.h's llama_ftype
    static const std::map<uint64_t, const char *> names
        = {{0, "F32"}, {1, "F16"}, {2, "Q4_0"}, {3, "Q4_1"}, {7, "Q8_0"}, {8, "Q5_0"}, {9, "Q5_1"}, {10, "Q2_K"},
            {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"}, {15, "Q4_K_M"}, {16, "Q5_K_S"},
            {17, "Q5_K_M"}, {18, "Q6_K"}, {19, "IQ2_XXS"}, {20, "IQ2_XS"}, {21, "Q2_K_S"}, {22, "IQ3_XS"},
            {23, "IQ3_XXS"}, {24, "IQ1_S"}, {25, "IQ4_NL"}, {26, "IQ3_S"}, {27, "IQ3_M"}, {28, "IQ2_S"}, {29, "IQ2_M"},
            {30, "IQ4_XS"}, {31, "IQ1_M"}, {32, "BF16"}, {36, "TQ1_0"}, {37, "TQ2_0"}, {38, "MXFP4_MOE"}};
    const auto it = names.find(t);
    return it == names.end() ? "" : it->second;
}

Model loadGgufModel(const std::string &path)
{
    const GgufFile f(path);
    Model m;
    m.config = ggufModelConfig(f);
    m.directory = path;
    m.name = fs::path(path).stem().string();
    const std::string &architecture = f.string("general.architecture");
    // The matrices stay in the file's encoding (weights a product reads a tile at a time, tensor/packedrows.h); the
    // vectors and the float32 matrices become float32.
    const auto packed = [&](const GgufFile::Entry &e) { return e.type != GgmlType::F32 && e.shape.size() >= 2; };
    double bytes = 0;
    for (const GgufFile::Entry &e : f.entries())
        bytes += packed(e) ? double(e.bytes) : double(Tensor::count(e.shape)) * sizeof(float);
    checkFitsInMemory(bytes,
        path + ": its " + std::to_string(Model::parameterCountOf(m.config))
            + " parameters, the matrices kept in the file's encoding and the rest as float32,");
    m.allocateBlocks();

    const std::map<std::string, std::string> names = ggufParameterNames(m.config);
    std::set<std::string> used;
    std::map<std::string, Tensor> stacks; // an [E, rows, columns] tensor of experts, read once
    forEachParameter(m, [&](const std::string &name, const Shape &shape, Tensor &tensor, bool) {
        if (architecture == "gpt-oss")
            if (std::optional<Tensor> held = gptOssTensor(f, name, used)) {
                if (held->shape() != shape)
                    throw Error(path + ": the tensors of " + name + " make shape " + held->shapeString()
                        + ", the metadata implies " + Tensor::shapeString(shape));
                tensor = std::move(*held);
                return;
            }
        const auto found = names.find(name);
        if (found == names.end())
            throw Error(path + ": the " + m.config.modelType + " parameter '" + name + "' has no GGUF name");
        const std::string &key = found->second;
        const GgufFile::Entry &entry
            = requiredTensor(f, key, "a " + m.config.modelType + " model of these keys has it");
        used.insert(key);
        const int expert = expertOf(name);
        Shape expected = shape;
        if (expert >= 0)
            expected.insert(expected.begin(), m.config.experts);
        if (entry.shape != expected)
            throw Error(path + ": tensor '" + key + "' has shape " + Tensor::shapeString(entry.shape)
                + ", the metadata implies " + Tensor::shapeString(expected));
        const auto read
            = [&] { return packed(entry) ? f.packedTensor(key) : f.tensor(key, SafetensorsFile::NonFinite::Refuse); };
        if (expert < 0) {
            tensor = ggufLayout(m.config, architecture, key, read(), GgufDirection::FromGguf);
        } else {
            auto stack = stacks.find(key);
            if (stack == stacks.end())
                stack = stacks.emplace(key, read()).first;
            if (const PackedRows *rows = stack->second.packing()) {
                tensor = Tensor::packed(rows->rowRange(int64_t(expert) * shape[0], shape[0]));
            } else {
                tensor = Tensor::uninitialized(shape);
                std::copy_n(stack->second.data() + int64_t(expert) * tensor.numel(), tensor.numel(), tensor.data());
            }
        }
    });
    if (f.find("rope_freqs.weight"))
        used.insert("rope_freqs.weight");
    if (architecture == "phi3") // read into the config
        for (const char *factors : {kPhi3LongFactors, kPhi3ShortFactors})
            if (f.find(factors))
                used.insert(factors);
    for (const GgufFile::Entry &e : f.entries())
        if (!used.count(e.name))
            throw Error(path + ": tensor '" + shownText(e.name) + "' has no place in a " + m.config.modelType
                + " model of these keys (llama.cpp refuses such a file too)");
    Model::GgufSource source;
    source.architecture = f.string("general.architecture");
    source.fileBytes = fs::file_size(path);
    double fileBytes = 0, elements = 0;
    for (const GgufFile::Entry &e : f.entries()) {
        fileBytes += double(e.bytes);
        elements += double(Tensor::count(e.shape));
    }
    source.bitsPerWeight = elements > 0 ? 8 * fileBytes / elements : 0;
    source.pairedRope = architecture == "llama" || architecture == "smollm3";
    m.gguf = source;
    m.dtype = f.has("general.file_type") ? ggufFileTypeName(f.unsignedValue("general.file_type")) : "";
    if (m.dtype.empty())
        m.dtype = "mixed";
    return m;
}

} // namespace atlas
