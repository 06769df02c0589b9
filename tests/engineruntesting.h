#pragma once

#include "engine/engine.h"
#include "errortesting.h"
#include "model/model.h"
#include "referencetesting.h"
#include "tensortesting.h"
#include "util/error.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

#include <cstring>
#include <map>
#include <memory>

// The engine's runs on the reference inputs under tests/data, shared by tst_engine_parity (the tensors against
// PyTorch) and tst_engine_contract (what every run promises: names, formulas, masks, bits, errors).
namespace atlas::testing {

// Checkpoints in the layouts of other families, each with its PyTorch reference (tests/tools/make_family_reference.py):
// Llama (GQA, biases, untied, llama3 rope_scaling, F32; and heads of head_dim 12 in a model 32 wide), Qwen2
// (multi-query, tied, BF16 in two shards), Qwen3 (QK-norm, head_dim 12, every attention bias, BF16), OLMo 2, Gemma 2
// and 3, SmolLM3 (NoPE layers with a window, BF16), Phi-3 (fused projections, partial rotary, LongRoPE's short and
// long factors), Mistral (sliding window, F16), GPT-NeoX (partial rotary with a
// parallel residual, F32; full rotary, sequential, F16) and GPT-Neo (a global and a local layer, unscaled scores,
// BF16), BERT (pre-training heads, F32; masked-LM head with the older gamma/beta names, F16; relative_key positions)
// Mixtral (top-2 of 4 SwiGLU experts, renormalised gates, BF16) and gpt-oss (sinks, YaRN, a window on one layer, a
// router with a bias and stacked clamped experts with biases, BF16; and its experts as MXFP4 blocks, whose decoded
// values, mxfp4.<parameter>.npy, must equal transformers' bit for bit).
constexpr const char *kFamilyModels[] = {"llama_tiny", "llama_hd_tiny", "qwen2_tiny", "qwen2_swa_tiny", "qwen3_tiny",
    "olmo2_tiny", "gemma2_tiny", "gemma3_tiny", "gemma3_mm_tiny", "smollm3_tiny", "phi3_tiny", "phi3_long_tiny",
    "qwen3_moe_tiny", "mistral_tiny", "neox_tiny", "neox_seq_tiny", "neo_tiny", "bert_tiny", "bert_mlm_tiny",
    "bert_rel_tiny", "mixtral_tiny", "gpt_oss_tiny", "gpt_oss_mxfp4_tiny", "t5_tiny", "t5v11_tiny"};

// The input the reference was computed on: variant_ref/input.json (tokens and padding), <model>_ref/input.json or
// tokens.json (familyReferenceInput), else gpt2_tiny_ref/tokens.json (gpt2_tiny_prefixed and gpt2_tiny_f16's).
inline Input engineReferenceInput(const QString &model)
{
    if (model.startsWith(QLatin1String("variant"))) {
        const QJsonObject o = QJsonDocument::fromJson(readFile(dataPath("variant_ref/input.json"))).object();
        return Input {intList(o.value("tokens")), intList(o.value("padding"))};
    }
    const bool own
        = QFile::exists(dataPath(model + "_ref/input.json")) || QFile::exists(dataPath(model + "_ref/tokens.json"));
    return familyReferenceInput(own ? model : QStringLiteral("gpt2_tiny"));
}

inline std::shared_ptr<const Model> loadTestModel(const QString &model)
{
    return std::make_shared<const Model>(Model::load(dataPath(model).toStdString()));
}

// Each model's engine on its reference input, run to the end once and shared by a test's functions.
class FinishedRuns
{
public:
    // Null when it could not run: error() says why.
    const Engine *of(const QString &model)
    {
        if (auto it = m_runs.find(model); it != m_runs.end())
            return it->second.get();
        if (m_errors.count(model))
            return nullptr;
        const QString error = errorFrom([&] {
            auto engine = std::make_unique<Engine>(loadTestModel(model), engineReferenceInput(model));
            if (!engine->runToEnd())
                throw Error("runToEnd() returned false without a progress callback");
            m_runs[model] = std::move(engine);
        });
        if (!error.isNull()) {
            m_errors[model] = model + ": " + error;
            return nullptr;
        }
        return m_runs[model].get();
    }
    QString error(const QString &model) const
    {
        const auto it = m_errors.find(model);
        return it == m_errors.end() ? QString() : it->second;
    }

private:
    std::map<QString, std::unique_ptr<Engine>> m_runs;
    std::map<QString, QString> m_errors;
};

// Whether two traces hold the same names, shapes and bits; `why` names the first pair that differs.
inline bool bitIdentical(const Trace &a, const Trace &b, QString *why)
{
    if (a.entries().size() != b.entries().size()) {
        *why = QString("%1 entries vs %2").arg(a.entries().size()).arg(b.entries().size());
        return false;
    }
    for (size_t i = 0; i < a.entries().size(); ++i) {
        const TraceEntry &x = a.entries()[i], &y = b.entries()[i];
        *why = QString::fromStdString(x.name + " / " + y.name);
        if (x.name != y.name || x.tensor.shape() != y.tensor.shape())
            return false;
        if (std::memcmp(x.tensor.data(), y.tensor.data(), x.tensor.bytes()) != 0) {
            *why += " differ in their bits";
            return false;
        }
    }
    return true;
}

} // namespace atlas::testing
