#include "model/ggufconfig.h"

#include "model/configjson.h"
#include "model/ggufmodel.h"
#include "util/error.h"
#include "util/text.h"

#include <array>

namespace atlas {

namespace {

using json = nlohmann::json;

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
    GgufArchitecture {"t5", "t5"},
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
    const GgufFile::Entry &embedding = ggufRequiredTensor(f, "token_embd.weight", "every model has its embedding");
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

// T5Config's keys as llama.cpp's t5 reads them (llama_model_t5): block_count the encoder's blocks and
// decoder_block_count the decoder's (the encoder's when absent), key_length d_kv, relative_buckets_count. llama.cpp
// buckets relative positions up to a distance of 128 whatever the checkpoint had (the file holds no
// relative_attention_max_distance), gates the feed-forward with the tanh GELU when the blocks have ffn_gate (ReLU
// otherwise), and reads the output head unscaled: from `output`, or from the embedding when the file has none, where
// Hugging Face's tied T5 multiplies by d_model^(−1/2) first. So a t5 file is read with an untied head, as llama.cpp
// computes it.
json t5ConfigJson(const GgufFile &f)
{
    const auto key = [](const char *suffix) { return std::string("t5.") + suffix; };
    const int64_t heads = countKey(f, key("attention.head_count"), 1 << 16),
                  dKv = countKey(f, key("attention.key_length"));
    if (f.has(key("attention.head_count_kv")) && countKey(f, key("attention.head_count_kv"), 1 << 16) != heads)
        keyFails(f, key("attention.head_count_kv"), "grouped K/V heads in a t5 file are not read");
    if (f.has(key("attention.value_length")) && countKey(f, key("attention.value_length")) != dKv)
        keyFails(f, key("attention.value_length"), "values as wide as the keys (attention.key_length) are read only");
    const int64_t encoder = countKey(f, key("block_count"), 256);
    json j = {{"model_type", "t5"}, {"d_model", countKey(f, key("embedding_length"))}, {"d_kv", dKv},
        {"num_heads", heads}, {"num_layers", encoder},
        {"num_decoder_layers",
            f.has(key("decoder_block_count")) ? countKey(f, key("decoder_block_count"), 256) : encoder},
        {"d_ff", countKey(f, key("feed_forward_length"))}, {"vocab_size", embeddingOf(f).shape[0]},
        {"relative_attention_num_buckets", countKey(f, key("attention.relative_buckets_count"), 4096)},
        {"relative_attention_max_distance", 128},
        {"layer_norm_epsilon", f.number(key("attention.layer_norm_rms_epsilon"))},
        {"feed_forward_proj", f.find("enc.blk.0.ffn_gate.weight") ? "gated-gelu" : "relu"},
        {"tie_word_embeddings", false}};
    if (f.has(key("context_length")))
        j["n_positions"] = countKey(f, key("context_length"));
    if (f.has(key("decoder_start_token_id")))
        j["decoder_start_token_id"] = f.unsignedValue(key("decoder_start_token_id"));
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
    if (a == "t5")
        return t5ConfigJson(f);
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

} // namespace

// The entry of tensor `name`, or the error that it is missing, saying `why` it should be there.
const GgufFile::Entry &ggufRequiredTensor(const GgufFile &f, const std::string &name, const std::string &why)
{
    const GgufFile::Entry *e = f.find(name);
    if (!e)
        throw Error(f.path() + ": tensor '" + name + "' is missing (" + why + ")");
    return *e;
}

ModelConfig ggufModelConfig(const GgufFile &file)
{
    const GgufArchitecture &arch = architectureOf(file);
    const json j = configJson(file, arch);
    const std::string source = file.path() + " (its metadata read as a " + arch.modelType + " config.json)";
    return ModelConfig::fromJson(j.dump(), source);
}

} // namespace atlas
