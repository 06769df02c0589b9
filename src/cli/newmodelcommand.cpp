#include "arguments.h"
#include "commands.h"
#include "io/stageddirectory.h"
#include "model/model.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>

#include <limits>
#include <map>
#include <set>

namespace atlas {

namespace {

// A family's config.json keys for new-model's options (--family
// llama|mistral|mixtral|qwen2|qwen3|qwen3_moe|olmo2|gemma2|gemma3_text|smollm3|phi3|gpt_oss|gpt_neox|gpt_neo).
nlohmann::json llamaFamilyConfig(const Arguments &args, const std::string &family)
{
    const int heads = args.intValue("heads", 4, 1, 1024);
    nlohmann::json j = {
        {"model_type", family},
        {"num_hidden_layers", args.intValue("layers", 2, 1, 256)},
        {"num_attention_heads", heads},
        {"num_key_value_heads", args.intValue("kv-heads", heads, 1, 1024)},
        {"hidden_size", args.intValue("d-model", 64, 1, 65536)},
        {"vocab_size", args.intValue("vocab", 256, 1, 1 << 24)},
        {"max_position_embeddings", args.intValue("context", 1024, 1, 1 << 20)},
        {"tie_word_embeddings", args.flag("tied") || family.starts_with("gemma")}, // Gemma's head is the embedding
        {"atlas_description", args.value("description", "")},
    };
    j["intermediate_size"] = args.intValue("d-ff", 4 * j["hidden_size"].get<int>(), 1, 1 << 20);
    if (args.has("rope-theta"))
        j["rope_theta"] = args.doubleValue("rope-theta", 10000, 2, 1e9);
    if (family == "gemma2" || family == "gemma3_text") { // head_dim is 256 when absent
        j["head_dim"] = j["hidden_size"].get<int>() / heads;
        j["query_pre_attn_scalar"] = j["head_dim"];
        j["sliding_window"] = args.intValue("window", 4096, 1, 1 << 20);
    }
    if (family == "smollm3") { // NoPE every N-th layer; a window, if asked for, on those layers (SmolLM3Config)
        j["no_rope_layer_interval"] = args.intValue("nope-every", 4, 1, 1 << 16);
        if (args.has("window")) {
            j["use_sliding_window"] = true;
            j["sliding_window"] = args.intValue("window", 4096, 1, 1 << 20);
        }
    }
    if (family == "phi3") { // fused projections; a part of each head turned, a window, if asked for, on every layer
        j["partial_rotary_factor"] = args.doubleValue("partial-rotary", 1.0, 0.01, 1.0);
        if (args.has("window"))
            j["sliding_window"] = args.intValue("window", 4096, 1, 1 << 20);
    }
    if (family == "gpt_oss") { // GptOssConfig's layout: a window on every other layer, experts in every layer; YaRN
        // over an original context of a quarter of the positions
        const int context = j["max_position_embeddings"].get<int>();
        j["head_dim"] = j["hidden_size"].get<int>() / heads;
        j["sliding_window"] = args.intValue("window", 128, 1, 1 << 20);
        j["num_local_experts"] = args.intValue("experts", 4, 2, 1024);
        j["num_experts_per_tok"] = args.intValue("top-k", 2, 1, 1024);
        j["intermediate_size"] = args.intValue("d-ff", j["hidden_size"].get<int>(), 1, 1 << 20);
        j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"beta_fast", 32.0}, {"beta_slow", 1.0},
            {"original_max_position_embeddings", std::max(1, context / 4)}, {"truncate", false}};
    }
    if (family == "mixtral" || family == "qwen3_moe") { // experts in every layer, --d-ff wide: Mixtral's top-k
        // renormalised (MixtralSparseMoeBlock), Qwen3-MoE's too (norm_topk_prob), with Qwen3's QK-norm
        const bool qwen = family == "qwen3_moe";
        j[qwen ? "num_experts" : "num_local_experts"] = args.intValue("experts", 4, 2, 1024);
        j["num_experts_per_tok"] = args.intValue("top-k", 2, 1, 1024);
        if (qwen) {
            j["moe_intermediate_size"] = j["intermediate_size"];
            j["norm_topk_prob"] = true;
            j["head_dim"] = j["hidden_size"].get<int>() / heads;
        }
        if (args.has("window"))
            j["sliding_window"] = args.intValue("window", 4096, 1, 1 << 20);
    }
    if (family == "gpt_neox") // Pythia's defaults: a quarter of each head turns, parallel residual
        j["rotary_pct"] = 0.25;
    if (family == "gpt_neo") { // GPT-Neo's keys, and its alternating global and local layers
        j["num_layers"] = j["num_hidden_layers"];
        j["num_heads"] = j["num_attention_heads"];
        nlohmann::json kinds = nlohmann::json::array();
        for (int i = 0; i < j["num_layers"].get<int>(); ++i)
            kinds.push_back(i % 2 == 0 ? "global" : "local");
        j["attention_types"] = {{kinds, 1}};
        j["window_size"] = args.intValue("window", 256, 1, 1 << 20);
    }
    return j;
}

// T5's keys: v1.0 (ReLU, the head tied to the embedding) with --tied, else v1.1's gated GELU and untied head.
nlohmann::json t5Config(const Arguments &args)
{
    const int heads = args.intValue("heads", 4, 1, 1024), width = args.intValue("d-model", 64, 1, 65536);
    if (width % heads != 0)
        throw Error("--d-model " + std::to_string(width) + " is not a multiple of --heads " + std::to_string(heads));
    const bool tied = args.flag("tied");
    return {
        {"model_type", "t5"},
        {"d_model", width},
        {"d_kv", width / heads},
        {"num_heads", heads},
        {"num_layers", args.intValue("layers", 2, 1, 256)},
        {"d_ff", args.intValue("d-ff", 4 * width, 1, 1 << 20)},
        {"vocab_size", args.intValue("vocab", 256, 1, 1 << 24)},
        {"n_positions", args.intValue("context", 1024, 1, 1 << 20)},
        {"feed_forward_proj", tied ? "relu" : "gated-gelu"},
        {"tie_word_embeddings", tied},
        {"atlas_description", args.value("description", "")},
    };
}

nlohmann::json gpt2Config(const Arguments &args)
{
    nlohmann::json j = {
        {"n_layer", args.intValue("layers", 2, 1, 256)},
        {"n_head", args.intValue("heads", 4, 1, 1024)},
        {"n_embd", args.intValue("d-model", 64, 1, 65536)},
        {"vocab_size", args.intValue("vocab", 256, 1, 1 << 24)},
        {"n_positions", args.intValue("context", 1024, 1, 1 << 20)},
        {"activation_function", args.value("activation", "gelu_new")},
        {"atlas_layer_norm", args.value("layer-norm", "pre")},
        {"atlas_positions", args.value("positions", "learned")},
        {"atlas_causal", !args.flag("bidirectional")},
        {"atlas_tokenizer", args.value("tokenizer", "bytes")},
        {"atlas_description", args.value("description", "")},
    };
    if (args.has("d-ff"))
        j["n_inner"] = args.intValue("d-ff", 0, 1, 1 << 20);
    return j;
}

// The options only some families read; one a family cannot honour is refused rather than silently dropped (a T5
// with --kv-heads 2 would be written with full multi-head attention).
void checkFamilyOptions(const Arguments &args, const std::string &family)
{
    static const std::map<std::string, std::set<std::string>> honoured = {
        {"gpt2", {"activation", "layer-norm", "positions", "bidirectional", "tokenizer"}},
        {"t5", {"tied"}},
        {"llama", {"kv-heads", "tied", "rope-theta"}},
        {"mistral", {"kv-heads", "tied", "rope-theta"}},
        {"qwen2", {"kv-heads", "tied", "rope-theta"}},
        {"qwen3", {"kv-heads", "tied", "rope-theta"}},
        {"olmo2", {"kv-heads", "tied", "rope-theta"}},
        {"gemma2", {"kv-heads", "tied", "rope-theta", "window"}},
        {"gemma3_text", {"kv-heads", "tied", "rope-theta", "window"}},
        {"smollm3", {"kv-heads", "tied", "rope-theta", "window", "nope-every"}},
        {"phi3", {"kv-heads", "tied", "rope-theta", "window", "partial-rotary"}},
        {"gpt_oss", {"kv-heads", "tied", "rope-theta", "window", "experts", "top-k"}},
        {"mixtral", {"kv-heads", "tied", "rope-theta", "window", "experts", "top-k"}},
        {"qwen3_moe", {"kv-heads", "tied", "rope-theta", "experts", "top-k"}},
        {"gpt_neox", {"tied", "rope-theta"}},
        {"gpt_neo", {"tied", "window"}},
    };
    const auto own = honoured.find(family);
    if (own == honoured.end())
        throw Error("option --family: '" + family
            + "' is not one of gpt2, llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, olmo2, gemma2, gemma3_text, "
              "smollm3, phi3, gpt_oss, gpt_neox, gpt_neo, t5");
    for (const auto &[other, options] : honoured)
        for (const std::string &option : options)
            if ((args.has(option) || args.flag(option)) && !own->second.contains(option)) {
                std::string which;
                for (const auto &[name, theirs] : honoured)
                    if (theirs.contains(option))
                        which += (which.empty() ? "" : ", ") + name;
                throw Error("option --" + option + ": the " + family + " family has no such setting (it is " + which
                    + "'s); leave it out or choose one of those with --family");
            }
}

} // namespace

// A model with GPT-2's initialisation from a fixed seed. With --family llama|mistral|qwen2|qwen3|olmo2: that family's
// layout (RMSNorm, RoPE, grouped-query attention with N K/V heads, SwiGLU; qwen3's and olmo2's QK-norm), as its Hugging
// Face classes save it; --family gpt_neox (Pythia's layout) or gpt_neo [--window W] (global and local layers) likewise;
// --family t5: an encoder and a decoder of --layers blocks each, v1.1's gated GELU and untied head, or v1.0's ReLU and
// tied head with --tied.
int newModelCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "new-model");
    const std::string family = args.value("family", "gpt2");
    checkFamilyOptions(args, family);
    const nlohmann::json j = family == "gpt2" ? gpt2Config(args)
        : family == "t5"                      ? t5Config(args)
                                              : llamaFamilyConfig(args, family);
    const ModelConfig config = ModelConfig::fromJson(j.dump(), "new-model options");
    const int seed = args.intValue("seed", 1, 0, std::numeric_limits<int>::max());
    Model model = Model::random(config, static_cast<uint64_t>(seed));
    // The config and the weights as one set: a new-model killed half-way, or a full disk, leaves no config beside
    // missing or old weights (io/stageddirectory.h); a directory of someone else's files is refused untouched.
    StagedDirectory staged(args.required("out"), "new-model");
    model.save(staged.path());
    staged.commit();
    std::cout << "wrote a " << model.parameterCount() << "-parameter " << config.modelType << " model (seed " << seed
              << ") to " << args.value("out") << "\n";
    return 0;
}

} // namespace atlas
