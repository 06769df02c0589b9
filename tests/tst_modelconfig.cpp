// config.json as a stranger writes it: every integer is type- and range-checked before use, and every failure,
// nlohmann's own exceptions included, names the file and the key.
#include "errortesting.h"
#include "model/modelconfig.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>

#include <cmath>

using namespace atlas;
using atlas::testing::errorFrom;

class TestModelConfig : public QObject
{
    Q_OBJECT

    static std::string errorOf(const std::string &json)
    {
        try {
            ModelConfig::fromJson(json, "dir/config.json");
        } catch (const Error &e) {
            return e.what();
        }
        return {};
    }

private slots:
    void acceptsGpt2()
    {
        const ModelConfig c = ModelConfig::fromJson(
            R"({"n_layer": 12, "n_head": 12, "n_embd": 768, "n_inner": null, "vocab_size": 50257, "n_ctx": 1024})",
            "gpt2/config.json");
        QCOMPARE(c.dModel, 768);
        QCOMPARE(c.dFF, 3072);
        QCOMPARE(c.context, 1024);
        QCOMPARE(ModelConfig::fromJson(c.toJson(), "again").dFF, 3072);
    }

    // Every family's config.json as this program writes it reads back the same: the keys that shape the forward pass
    // survive (GQA, rope_scaling, partial rotary, local layers, experts, the atlas_ keys of a built-in model).
    void eachFamilyRoundTrips_data()
    {
        QTest::addColumn<QString>("json");
        QTest::newRow("llama: GQA, llama3 scaling, biases")
            << R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "intermediate_size": 48, "attention_bias": true,
                  "rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4,
                                   "original_max_position_embeddings": 64}, "atlas_tokenizer": "bytes",
                  "atlas_task": "reverse"})";
        QTest::newRow("qwen2: tied, linear scaling")
            << R"({"model_type": "qwen2", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "num_key_value_heads": 1, "intermediate_size": 40, "tie_word_embeddings": true,
                  "rope_scaling": {"type": "linear", "factor": 2}})";
        QTest::newRow("mixtral: experts")
            << R"({"model_type": "mixtral", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "intermediate_size": 24, "num_local_experts": 4, "num_experts_per_tok": 2,
                  "sliding_window": 16})";
        QTest::newRow("gpt_neox: a rotary_pct whose product is not a short decimal")
            << R"({"model_type": "gpt_neox", "hidden_size": 192, "num_hidden_layers": 2, "num_attention_heads": 2,
                  "intermediate_size": 48, "rotary_pct": 0.3, "use_parallel_residual": false,
                  "rope_scaling": {"type": "linear", "factor": 4}})";
        QTest::newRow("llama: head_dim other than hidden / heads")
            << R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "intermediate_size": 40, "head_dim": 12})";
        QTest::newRow("qwen2: sliding window from max_window_layers on")
            << R"({"model_type": "qwen2", "hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 4,
                  "intermediate_size": 40, "use_sliding_window": true, "sliding_window": 3, "max_window_layers": 1})";
        QTest::newRow("qwen2: sliding window by layer_types")
            << R"({"model_type": "qwen2", "hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 4,
                  "intermediate_size": 40, "use_sliding_window": true, "sliding_window": 5,
                  "layer_types": ["sliding_attention", "full_attention", "sliding_attention"]})";
        QTest::newRow("qwen3: QK-norm, head_dim, attention_bias, a window by layer_types")
            << R"({"model_type": "qwen3", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "intermediate_size": 40, "head_dim": 12, "attention_bias": true,
                  "use_sliding_window": true, "sliding_window": 4,
                  "layer_types": ["full_attention", "sliding_attention"]})";
        QTest::newRow("olmo2: norms after the sub-layers, QK-norm over the projections")
            << R"({"model_type": "olmo2", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "intermediate_size": 40, "attention_bias": true})";
        QTest::newRow("gemma2: sandwich (1 + w) norms, soft-caps, query_pre_attn_scalar, alternating window")
            << R"({"model_type": "gemma2", "hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "intermediate_size": 40, "head_dim": 12, "query_pre_attn_scalar": 10,
                  "attn_logit_softcapping": 1.5, "final_logit_softcapping": null, "sliding_window": 3})";
        QTest::newRow("gemma3_text: QK-norm, a global layer every 3, a local RoPE base")
            << R"({"model_type": "gemma3_text", "hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "intermediate_size": 40, "head_dim": 12, "sliding_window": 3,
                  "sliding_window_pattern": 3, "rope_local_base_freq": 100, "rope_theta": 10000})";
        QTest::newRow("smollm3: NoPE layers by no_rope_layers, a window on them")
            << R"({"model_type": "smollm3", "hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "intermediate_size": 40, "no_rope_layers": [1, 0, 1, 0],
                  "use_sliding_window": true, "sliding_window": 3})";
        QTest::newRow("smollm3: NoPE every third layer")
            << R"({"model_type": "smollm3", "hidden_size": 32, "num_hidden_layers": 7, "num_attention_heads": 4,
                  "intermediate_size": 40, "no_rope_layer_interval": 3})";
        QTest::newRow("qwen3_moe: QK-norm, experts moe_intermediate_size wide")
            << R"({"model_type": "qwen3_moe", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "intermediate_size": 64, "moe_intermediate_size": 20, "num_experts": 4,
                  "num_experts_per_tok": 2, "norm_topk_prob": true, "head_dim": 12})";
        QTest::newRow("gpt_neo: local layers")
            << R"({"model_type": "gpt_neo", "hidden_size": 32, "num_layers": 4, "num_heads": 4,
                  "attention_types": [[["global", "local"], 2]], "window_size": 5})";
        QTest::newRow("bert") << R"({"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2,
                                     "num_attention_heads": 4, "intermediate_size": 48, "type_vocab_size": 2})";
        QTest::newRow("t5 v1.0: relu, tied") << R"({"model_type": "t5", "d_model": 32, "d_kv": 8, "num_heads": 4,
                                     "num_layers": 2, "num_decoder_layers": 3, "d_ff": 48,
                                     "relative_attention_num_buckets": 8, "relative_attention_max_distance": 12})";
        QTest::newRow("flan-t5: gated-gelu, heads narrower than the model")
            << R"({"model_type": "t5", "d_model": 32, "d_kv": 12, "num_heads": 3, "num_layers": 2, "d_ff": 40,
                  "feed_forward_proj": "gated-gelu", "tie_word_embeddings": false})";
    }
    void eachFamilyRoundTrips()
    {
        QFETCH(QString, json);
        const ModelConfig first = ModelConfig::fromJson(json.toStdString(), "family/config.json");
        const ModelConfig again = ModelConfig::fromJson(first.toJson(), "again");
        QCOMPARE(again.toJson(), first.toJson());
        QCOMPARE(again.kvHeadCount(), first.kvHeadCount());
        QCOMPARE(again.rotaryDims, first.rotaryDims);
        QCOMPARE(again.windowedLayers, first.windowedLayers);
        QCOMPARE(again.noRopeLayers, first.noRopeLayers);
        QCOMPARE(again.ropeLocalBase, first.ropeLocalBase);
        QCOMPARE(again.ropeBase, first.ropeBase);
        QCOMPARE(again.slidingWindow, first.slidingWindow);
        QCOMPARE(again.experts, first.experts);
        QCOMPARE(again.ropeFrequencies(), first.ropeFrequencies());
        QCOMPARE(again.tokenizer, first.tokenizer);
        QCOMPARE(again.task, first.task);
        QCOMPARE(again.tiedHead, first.tiedHead);
        QCOMPARE(again.qkvBias, first.qkvBias);
        QCOMPARE(again.outBias, first.outBias);
        QCOMPARE(again.mlpBias, first.mlpBias);
        QVERIFY(again.qkNorm == first.qkNorm);
        QVERIFY(again.layerNorm == first.layerNorm);
        QCOMPARE(again.normAddsOne, first.normAddsOne);
        QCOMPARE(again.attentionSoftcap, first.attentionSoftcap);
        QCOMPARE(again.logitSoftcap, first.logitSoftcap);
        QCOMPARE(again.queryScaleBase, first.queryScaleBase);
        QCOMPARE(again.embeddingScale, first.embeddingScale);
        QCOMPARE(again.slidingWindow, first.slidingWindow);
        QCOMPARE(again.windowedLayers, first.windowedLayers);
        QCOMPARE(again.headDim(), first.headDim());
        QCOMPARE(again.encoderLayers, first.encoderLayers);
        QCOMPARE(again.gatedFfn, first.gatedFfn);
        QCOMPARE(again.decoderStart, first.decoderStart);
    }

    void refusesBadIntegers_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("key");
        // Found by probing: 4294967328 loaded as 32, 2^40 as 0, 2^30 overflowed 4 · n_embd.
        QTest::newRow("n_embd wraps to 32") << R"({"n_embd": 4294967328})"
                                            << "'n_embd'";
        QTest::newRow("n_layer 2^40") << R"({"n_layer": 1099511627776})"
                                      << "'n_layer'";
        QTest::newRow("n_embd 2^30") << R"({"n_embd": 1073741824, "n_head": 1})"
                                     << "'n_embd'";
        QTest::newRow("negative n_head") << R"({"n_head": -4})"
                                         << "'n_head'";
        QTest::newRow("float n_layer") << R"({"n_layer": 2.5})"
                                       << "'n_layer'";
        QTest::newRow("string vocab") << R"({"vocab_size": "256"})"
                                      << "'vocab_size'";
        QTest::newRow("n_positions 1e30") << R"({"n_positions": 1e30})"
                                          << "'n_positions'";
        QTest::newRow("too large for a double") << R"({"n_embd": 1e500})"
                                                << "'n_embd'";
        QTest::newRow("epsilon nan-like") << R"({"layer_norm_epsilon": -1})"
                                          << "'layer_norm_epsilon'";
        QTest::newRow("matrix too large") << R"({"vocab_size": 16000000, "n_embd": 65536, "n_head": 1})"
                                          << "vocab_size · n_embd";
        QTest::newRow("n_inner default too large") << R"({"n_embd": 65536, "n_head": 1, "n_inner": null})"
                                                   << "n_inner";
    }

    void refusesBadIntegers()
    {
        QFETCH(QString, json);
        QFETCH(QString, key);
        const std::string m = errorOf(json.toStdString());
        QVERIFY2(m.starts_with("dir/config.json: "), m.c_str());
        QVERIFY2(QString::fromStdString(m).contains(key), m.c_str());
        QVERIFY2(!QString::fromStdString(m).contains("[json.exception"), m.c_str());
    }

    // Special tokens: named ids inside the vocabulary, one name per id; the sentinels run from <extra_id_0> without
    // a gap; the ordinary tokens are those below every special one; they survive a round trip.
    void specialTokensAreNamedIdsInsideTheVocabulary()
    {
        const std::string base = R"({"vocab_size": 260, "atlas_tokenizer": "bytes", "atlas_special_tokens": )";
        const ModelConfig c = ModelConfig::fromJson(
            base + R"({"<extra_id_1>": 259, "[MASK]": 256, "<extra_id_0>": 258, "[CLS]": 257}})", "m/config.json");
        QCOMPARE(c.specialToken("[MASK]"), 256);
        QCOMPARE(c.specialToken("[SEP]"), -1);
        QCOMPARE(c.sentinelTokens(), (std::vector<int> {258, 259}));
        QCOMPARE(c.ordinaryTokens(), 256);
        QCOMPARE(c.specialTokens.front().first, std::string("[MASK]")); // sorted by id
        QCOMPARE(ModelConfig::fromJson(c.toJson(), "again").specialTokens, c.specialTokens);
        QCOMPARE(ModelConfig().ordinaryTokens(), ModelConfig().vocab);
        for (const auto &[json, reason] : {std::pair {R"({"[MASK]": 260}})", "outside the vocabulary"},
                 {R"({"[MASK]": 256, "[CLS]": 256}})", "share id 256"},
                 {R"({"[MASK]": "x"}})", "must map to a token id"}, {R"({"": 256}})", "1 to 64 characters"},
                 {R"(["[MASK]"]})", "must map at most"}}) {
            const std::string m = errorOf(base + json);
            QVERIFY2(m.find(reason) != std::string::npos && m.find("m/config.json") == std::string::npos
                    && m.find("dir/config.json") != std::string::npos,
                m.c_str());
        }
    }

    // Model::random and new-model validate built configs with the same ranges.
    // SmolLM3Config: no_rope_layers[i] == 0 marks a NoPE layer; without it every no_rope_layer_interval-th layer (4)
    // is one; with use_sliding_window the window sits on the NoPE layers unless layer_types says otherwise; the
    // head is tied and rope_theta is 2e6 when the keys are absent.
    void smolLM3ReadsItsNoPELayers()
    {
        const ModelConfig byDefault = ModelConfig::fromJson(
            R"({"model_type": "smollm3", "hidden_size": 32, "num_hidden_layers": 8, "num_attention_heads": 4,
                "intermediate_size": 40})",
            "smol/config.json");
        QCOMPARE(byDefault.noRopeLayers, (std::vector<int> {3, 7}));
        QVERIFY(byDefault.rotates(2) && !byDefault.rotates(3) && !byDefault.rotates(7));
        QVERIFY(byDefault.tiedHead);
        QCOMPARE(byDefault.ropeBase, 2e6f);
        QCOMPARE(byDefault.slidingWindow, 0);
        const ModelConfig windowed = ModelConfig::fromJson(
            R"({"model_type": "smollm3", "hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 4,
                "intermediate_size": 40, "no_rope_layers": [1, 0, 1, 0], "use_sliding_window": true,
                "sliding_window": 3})",
            "smol/config.json");
        QCOMPARE(windowed.noRopeLayers, (std::vector<int> {1, 3}));
        QCOMPARE(windowed.windowedLayers, (std::vector<int> {1, 3}));
        QCOMPARE(windowed.slidingWindow, 3);
        const ModelConfig byTypes = ModelConfig::fromJson(
            R"({"model_type": "smollm3", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                "intermediate_size": 40, "no_rope_layers": [1, 0], "use_sliding_window": true, "sliding_window": 3,
                "layer_types": ["sliding_attention", "full_attention"]})",
            "smol/config.json");
        QCOMPARE(byTypes.windowedLayers, (std::vector<int> {0}));
    }

    // A gemma3 (multimodal) config is read as its text_config's Gemma 3, with Gemma3TextConfig's defaults for the
    // keys Google's configs leave out there (vocab_size 262208, max_position_embeddings 131072).
    void gemma3MultimodalReadsItsTextConfig()
    {
        const ModelConfig c = ModelConfig::fromJson(
            R"({"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
                "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                "num_attention_heads": 8, "num_hidden_layers": 34, "num_key_value_heads": 4,
                "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
                "vision_config": {"model_type": "siglip_vision_model"}})",
            "gemma-3-4b/config.json");
        QCOMPARE(QString::fromStdString(c.modelType), QString("gemma3_text"));
        QCOMPARE(QString::fromStdString(c.multimodalType), QString("gemma3"));
        QCOMPARE(c.vocab, 262208);
        QCOMPARE(c.context, 131072);
        QCOMPARE(c.headDim(), 256);
        QCOMPARE(c.layers, 34);
        QCOMPARE(c.slidingWindow, 1024);
        QVERIFY(c.windowed(0) && !c.windowed(5));
        QVERIFY(c.ropeScaling.kind == RopeScaling::Kind::Linear);
        QVERIFY(c.tiedHead);
    }

    // transformers 5's rope_parameters, flat or per kind of layer, read as the rope_theta, rope_scaling and
    // rope_local_base_freq they replace; a kind it cannot read is named where it was written.
    void ropeParametersReadAsTheKeysTheyReplace()
    {
        const std::string shape = R"("hidden_size": 32, "num_hidden_layers": 6, "num_attention_heads": 4,
            "intermediate_size": 40, "head_dim": 8, )";
        const ModelConfig older = ModelConfig::fromJson("{" + shape + R"("model_type": "gemma3_text",
            "rope_theta": 1e6, "rope_local_base_freq": 1e4, "rope_scaling": {"rope_type": "linear", "factor": 8}})",
            "old.json");
        const ModelConfig newer = ModelConfig::fromJson("{" + shape + R"("model_type": "gemma3_text",
            "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8, "rope_theta": 1e6},
                                "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}})",
            "new.json");
        for (int layer = 0; layer < 6; ++layer)
            QCOMPARE(newer.ropeFrequencies(layer), older.ropeFrequencies(layer));
        QCOMPARE(newer.ropeLocalBase, 1e4f);
        const ModelConfig llama = ModelConfig::fromJson("{" + shape + R"("model_type": "llama",
            "rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5, "factor": 8, "low_freq_factor": 1,
                                "high_freq_factor": 4, "original_max_position_embeddings": 64}})",
            "llama.json");
        QCOMPARE(llama.ropeBase, 5e5f);
        QVERIFY(llama.ropeScaling.kind == RopeScaling::Kind::Llama3);
        const QString error = errorFrom([&] {
            ModelConfig::fromJson("{" + shape + R"("model_type": "qwen3",
                "rope_parameters": {"rope_type": "dynamic", "rope_theta": 1e6, "factor": 4}})",
                "qwen.json");
        });
        QVERIFY2(error.contains("qwen.json") && error.contains("'rope_parameters'") && error.contains("dynamic"),
            qPrintable(error));
    }

    // Phi-4-mini's config.json (Phi3Config): q, k and v fused, 96 of each head's 128 dimensions turned
    // (partial_rotary_factor 0.75), LongRoPE from an original context of 4096 to 131072 (attention factor
    // √(1 + ln 32 / ln 4096)), its short factors up to 4096 positions and its long ones past that; a window on every
    // layer. Written back and read again, it turns the same.
    void phi3ReadsLongRopeAndPartialRotary()
    {
        std::string shortFactors, longFactors;
        for (int j = 0; j < 48; ++j) {
            const std::string separator = j ? ", " : "";
            shortFactors += separator + std::to_string(1.0 + 0.01 * j);
            longFactors += separator + std::to_string(1.0 + 0.5 * j);
        }
        const std::string json = R"({"model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "hidden_size": 3072,
            "intermediate_size": 8192, "num_hidden_layers": 32, "num_attention_heads": 24, "num_key_value_heads": 8,
            "vocab_size": 200064, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
            "partial_rotary_factor": 0.75, "rope_theta": 10000.0, "tie_word_embeddings": true,
            "sliding_window": 262144, "rope_scaling": {"type": "longrope", "short_factor": [)"
            + shortFactors + R"(], "long_factor": [)" + longFactors + "]}}";
        const ModelConfig c = ModelConfig::fromJson(json, "phi-4-mini/config.json");
        QVERIFY(c.fusesProjections());
        QCOMPARE(c.headDim(), 128);
        QCOMPARE(c.rotaryDims, 96);
        QCOMPARE(c.kvHeadCount(), 8);
        QVERIFY(c.tiedHead && !c.qkvBias && !c.outBias && !c.mlpBias);
        QCOMPARE(c.lnEpsilon, 1e-5f);
        QVERIFY(c.windowed(0) && c.windowed(31));
        QVERIFY(c.ropeScaling.kind == RopeScaling::Kind::LongRope);
        QCOMPARE(c.ropeScaling.originalContext, 4096);
        QVERIFY(std::abs(c.ropeAmplitude() - std::sqrt(1.0 + std::log(32.0) / std::log(4096.0))) < 1e-12);
        const std::vector<double> within = c.ropeFrequencies(-1, 4096), beyond = c.ropeFrequencies(-1, 4097);
        QCOMPARE(within.size(), size_t(48));
        for (const size_t j : {size_t(0), size_t(20), size_t(47)}) {
            const double plain = std::pow(10000.0, -2.0 * double(j) / 96.0);
            QVERIFY2(std::abs(within[j] * (1.0 + 0.01 * double(j)) / plain - 1) < 1e-6, qPrintable(QString::number(j)));
            QVERIFY2(std::abs(beyond[j] * (1.0 + 0.5 * double(j)) / plain - 1) < 1e-6, qPrintable(QString::number(j)));
        }
        const ModelConfig again = ModelConfig::fromJson(c.toJson(), "written/config.json");
        QCOMPARE(again.rotaryDims, 96);
        QCOMPARE(again.ropeFrequencies(-1, 5000), beyond);
        QCOMPARE(again.ropeFrequencies(-1, 100), within);
        QCOMPARE(again.ropeAmplitude(), c.ropeAmplitude());
        QCOMPARE(again.slidingWindow, 262144);
    }

    // gpt-oss-20b's config.json (GptOssConfig, transformers 4.55), with its MXFP4 note: sinks, biases on q, k, v
    // and o, 64 heads of 64 in a model 2880 wide, a window of 128 on the even layers, YaRN from 4096 positions by 32
    // (cos and sin × 0.1 ln 32 + 1, truncate false), 32 experts, 4 per token, the SwiGLU clamped at 7. Written back and
    // read again, it is the same model.
    void gptOssReadsItsConfig()
    {
        std::string types;
        for (int i = 0; i < 24; ++i)
            types += std::string(i ? ", " : "") + (i % 2 == 0 ? "\"sliding_attention\"" : "\"full_attention\"");
        const std::string json = R"({"architectures": ["GptOssForCausalLM"], "attention_bias": true, "head_dim": 64,
            "hidden_act": "silu", "hidden_size": 2880, "intermediate_size": 2880, "layer_types": [)"
            + types + R"(],
            "max_position_embeddings": 131072, "model_type": "gpt_oss", "num_attention_heads": 64,
            "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
            "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"},
            "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 8, "num_local_experts": 32,
            "rms_norm_eps": 1e-05, "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
            "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": false}, "rope_theta": 150000,
            "router_aux_loss_coef": 0.9, "sliding_window": 128, "swiglu_limit": 7.0, "tie_word_embeddings": false,
            "vocab_size": 201088})";
        const ModelConfig c = ModelConfig::fromJson(json, "gpt-oss-20b/config.json");
        QVERIFY(c.attentionSinks && c.stacksExperts() && c.droplessRouting);
        QVERIFY(c.qkvBias && c.outBias && !c.tiedHead);
        QCOMPARE(c.headDim(), 64);
        QCOMPARE(c.innerDim(), int64_t(4096));
        QCOMPARE(c.kvHeadCount(), 8);
        QCOMPARE(c.experts, 32);
        QCOMPARE(c.expertTopK, 4);
        QCOMPARE(c.gluClamp, 7.0f);
        QVERIFY(c.activation == Activation::QuickGelu);
        QVERIFY(c.windowed(0) && !c.windowed(1) && c.windowed(22) && !c.windowed(23));
        QCOMPARE(c.slidingWindow, 128);
        QVERIFY(c.ropeScaling.kind == RopeScaling::Kind::Yarn);
        QVERIFY(std::abs(c.ropeAmplitude() - (0.1 * std::log(32.0) + 1.0)) < 1e-12);
        // The fastest pair turns as RoPE's own, the slowest as RoPE's divided by 32: YaRN's two ends.
        const std::vector<double> f = c.ropeFrequencies();
        QCOMPARE(f.size(), size_t(32));
        QVERIFY(std::abs(f[0] - 1.0) < 1e-7);
        QVERIFY(std::abs(f[31] / (std::pow(150000.0, -62.0 / 64.0) / 32.0) - 1) < 1e-5);
        const ModelConfig again = ModelConfig::fromJson(c.toJson(), "written/config.json");
        QCOMPARE(again.ropeFrequencies(), f);
        QCOMPARE(again.ropeAmplitude(), c.ropeAmplitude());
        QCOMPARE(again.windowedLayers, c.windowedLayers);
        QVERIFY(again.attentionSinks && again.gluClamp == 7.0f && again.experts == 32 && again.headDim() == 64);
    }

    void gptOssRefusesWhatItCannotRead_data()
    {
        QTest::addColumn<QString>("keys");
        QTest::addColumn<QString>("expected");
        QTest::newRow("another sigmoid gain") << R"("swiglu_alpha": 2.0)"
                                              << "key 'swiglu_alpha' is 2.0: the experts' gate σ(α g) is read with α "
                                                 "= 1.702 only";
        QTest::newRow("DeepSeek's YaRN") << R"("rope_scaling": {"rope_type": "yarn", "factor": 4, "mscale": 1})"
                                         << "key 'rope_scaling.mscale' is not read (DeepSeek's YaRN)";
        QTest::newRow("another quantization") << R"("quantization_config": {"quant_method": "bitsandbytes"})"
                                              << "key 'quantization_config' names quant_method 'bitsandbytes': "
                                                 "gpt-oss checkpoints are read in F32, F16, BF16 or with their "
                                                 "experts in MXFP4 only";
        QTest::newRow("a layer type of another kind")
            << R"("layer_types": ["sliding_attention", "chunked_attention"])"
            << "key 'layer_types' [1]: expected \"full_attention\" or \"sliding_attention\"";
    }
    void gptOssRefusesWhatItCannotRead()
    {
        QFETCH(QString, keys);
        QFETCH(QString, expected);
        const std::string json = R"({"model_type": "gpt_oss", "hidden_size": 32, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 20, "vocab_size": 64, )"
            + keys.toStdString() + "}";
        const QString error = errorFrom([&] { ModelConfig::fromJson(json, "oss/config.json"); });
        QVERIFY2(error.startsWith("oss/config.json: ") && error.contains(expected), qPrintable(error));
    }

    void phi3RefusesWhatItCannotTurn_data()
    {
        QTest::addColumn<QString>("keys");
        QTest::addColumn<QString>("expected");
        QTest::newRow("a factor short") << R"("rope_scaling": {"type": "longrope", "short_factor": [1, 1, 1],
            "long_factor": [1, 1, 1, 1]})"
                                        << "short_factor must hold one factor for each of the 4 rotated pairs";
        QTest::newRow("a factor of 0") << R"("rope_scaling": {"type": "longrope", "short_factor": [1, 0, 1, 1],
            "long_factor": [1, 1, 1, 1]})"
                                       << "rope_scaling.short_factor[1]";
        QTest::newRow("no long factors") << R"("rope_scaling": {"type": "longrope", "short_factor": [1, 1, 1, 1]})"
                                         << "long_factor";
        QTest::newRow("dynamic") << R"("rope_scaling": {"type": "dynamic", "factor": 4})"
                                 << "'dynamic' is not supported (supported: linear, llama3, longrope and yarn";
        QTest::newRow("an odd rotary width") << R"("partial_rotary_factor": 0.375)"
                                             << "partial_rotary_factor' turns 3 of a head's 8 dimensions";
    }
    void phi3RefusesWhatItCannotTurn()
    {
        QFETCH(QString, keys);
        QFETCH(QString, expected);
        const std::string json = R"({"model_type": "phi3", "hidden_size": 32, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 40, )"
            + keys.toStdString() + "}";
        const QString error = errorFrom([&] { ModelConfig::fromJson(json, "phi/config.json"); });
        QVERIFY2(error.contains("phi/config.json") && error.contains(expected), qPrintable(error));
    }

    void smolLM3RefusesBadNoPELists_data()
    {
        QTest::addColumn<QString>("flags");
        QTest::addColumn<QString>("expected");
        QTest::newRow("too short") << "[1, 0]"
                                   << "each of the 4 layers";
        QTest::newRow("not a list") << "\"every fourth\""
                                    << "each of the 4 layers";
        QTest::newRow("a flag of 2") << "[1, 2, 1, 0]"
                                     << "no_rope_layers[1]";
        QTest::newRow("a flag of true") << "[1, true, 1, 0]"
                                        << "no_rope_layers[1]";
    }
    void smolLM3RefusesBadNoPELists()
    {
        QFETCH(QString, flags);
        QFETCH(QString, expected);
        const std::string json = R"({"model_type": "smollm3", "hidden_size": 32, "num_hidden_layers": 4,
            "num_attention_heads": 4, "intermediate_size": 40, "no_rope_layers": )"
            + flags.toStdString() + "}";
        try {
            ModelConfig::fromJson(json, "smol/config.json");
            QFAIL("accepted");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("smol/config.json") && QString(e.what()).contains(expected), e.what());
        }
    }

    void validateChecksRanges()
    {
        ModelConfig c;
        c.dModel = 1 << 30;
        c.heads = 1;
        try {
            c.validate("new-model");
            QFAIL("n_embd 2^30 accepted");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("n_embd"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestModelConfig)
#include "tst_modelconfig.moc"
