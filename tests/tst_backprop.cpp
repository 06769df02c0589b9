// Model-level backpropagation (src/core/train/backprop.h) against PyTorch autograd: the loss and every
// parameter's gradient for fixed targets, on both fixture models (tests/tools/make_grad_reference.py wrote
// tests/data/*_grads from an independent torch.nn.functional forward). Also `dump --grads`.
//
// Tolerance: max |diff| <= 1e-4 x max |ref| per tensor. The reference is float64 rounded to float32; the engine
// runs in float32, whose rounding through two blocks, the attention softmax and the LayerNorms leaves errors
// around 1e-6 of the largest gradient (printed at the end), two orders of magnitude inside the bound.

#include "commands.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "io/npy.h"
#include "model/model.h"
#include "ops/ops.h"
#include "referencetesting.h"
#include "testbundle.h"
#include "train/backprop.h"
#include "util/error.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <functional>
#include <memory>

using namespace atlas;
using testing::intList;

namespace {

constexpr double kRelTol = 1e-4;

double g_worst = 0.0; // the largest relative error of any passing comparison
QString g_worstName;

QString dataPath(const QString &relative)
{
    return QStringLiteral(ATLAS_TEST_DATA "/") + relative;
}

struct Case
{
    std::shared_ptr<Model> model;
    Input input;
    std::vector<int> targets;
};

// The model and input a reference directory was made from: input.json holds tokens, padding, targets, an encoder's
// source and an optional activation override ("gelu" = erf GELU).
Case loadCase(const QString &modelDir, const QString &refDir)
{
    QFile f(dataPath(refDir + "/input.json"));
    if (!f.open(QIODevice::ReadOnly))
        throw Error("missing " + f.fileName().toStdString());
    const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    Case c;
    c.model = std::make_shared<Model>(Model::load(dataPath(modelDir).toStdString()));
    if (o.value("activation").toString() == QLatin1String("gelu"))
        c.model->config.activation = Activation::GeluErf;
    if (o.contains("normaliser"))
        c.model->config.normaliser = normaliserArgument(o.value("normaliser").toString().toStdString(), "normaliser");
    c.input = {intList(o.value("tokens")), intList(o.value("padding"))};
    if (o.contains("source")) // an encoder–decoder: the encoder's tokens; "tokens" are the decoder's
        c.input.source = intList(o.value("source"));
    if (o.contains("sep")) // a BERT pair: [SEP]'s id, which a checkpoint's tokenizer would name
        c.model->config.specialTokens = {{"[SEP]", o.value("sep").toInt()}};
    c.targets = intList(o.value("targets"));
    return c;
}

Gradients runBackward(const Case &c)
{
    Engine engine(c.model, c.input);
    engine.runToEnd();
    return backward(*c.model, c.input, engine.trace(), c.targets);
}

// Empty when max |got - want| <= kRelTol * max |want|; records the worst passing ratio. A reference that is zero up to
// float64 rounding is a gradient that is zero in exact arithmetic (BERT's key bias adds the same q·b_k to every score
// of a row, which softmax ignores): float32 may leave rounding noise there, at most 1e-6.
QString compare(const QString &name, const Tensor &got, const Tensor &want)
{
    const auto largest = [](const Tensor &t) {
        double m = 0;
        for (int64_t i = 0; i < t.numel(); ++i)
            m = std::max(m, double(std::fabs(t.data()[i])));
        return m;
    };
    if (got.shape() == want.shape() && largest(want) < 1e-12)
        return largest(got) <= 1e-6 ? QString()
                                    : QString("%1: %2, where the gradient is 0").arg(name).arg(largest(got));
    double ratio = 0;
    const QString why = testing::compareToReference(name, got, want, kRelTol, &ratio);
    if (why.isEmpty() && ratio > g_worst) {
        g_worst = ratio;
        g_worstName = name;
    }
    return why;
}

using atlas::testing::errorFrom;

} // namespace

class TestBackprop : public QObject
{
    Q_OBJECT

private slots:
    void matchesPyTorch_data();
    void matchesPyTorch();
    void gradientsAreNotTrivial();
    void learnedAlphaGradientMatchesFiniteDifferences();
    void accumulatingAddsAndZeroResets();
    void badTargetsAndUntracedRunsAreErrors();
    void dumpWritesLossAndEveryGradient();
    void dumpRejectsTargetsOfTheWrongLength();
    void cleanupTestCase();
};

void TestBackprop::matchesPyTorch_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("ref");
    QTest::newRow("gpt2_tiny: pre-LN, learned positions, tanh GELU, causal") << "gpt2_tiny"
                                                                             << "gpt2_tiny_grads";
    QTest::newRow("gpt2_tiny, erf GELU, padding at 0 (a query with no key)") << "gpt2_tiny"
                                                                             << "gpt2_tiny_grads/gelu_erf_padded";
    QTest::newRow("variant: post-LN, sinusoidal, ReLU, bidirectional, padding") << "variant"
                                                                                << "variant_grads";
    // Sparse normalisers in place of softmax: exact zeros, so only the support carries a gradient.
    QTest::newRow("gpt2_tiny, sparsemax, padding at 0") << "gpt2_tiny"
                                                        << "gpt2_tiny_grads/sparsemax";
    QTest::newRow("gpt2_tiny, 1.5-entmax") << "gpt2_tiny"
                                           << "gpt2_tiny_grads/entmax15";
    // The Llama family (tests/tools/make_family_reference.py): RMSNorm, RoPE with llama3 scaling, grouped-query
    // attention, SwiGLU, biases and an untied head; Qwen2's multi-query attention and tied head; Mistral's window.
    QTest::newRow("llama_tiny: GQA, biases, untied lm_head") << "llama_tiny"
                                                             << "llama_tiny_grads";
    QTest::newRow("llama_hd_tiny: heads of 12 in a model 32 wide") << "llama_hd_tiny"
                                                                   << "llama_hd_tiny_grads";
    QTest::newRow("qwen2_tiny: multi-query, q/k/v biases, tied") << "qwen2_tiny"
                                                                 << "qwen2_tiny_grads";
    QTest::newRow("qwen3_tiny: QK-norm, head_dim 12, all four attention biases") << "qwen3_tiny"
                                                                                 << "qwen3_tiny_grads";
    QTest::newRow("olmo2_tiny: norms after the sub-layers, QK-norm over the projections") << "olmo2_tiny"
                                                                                          << "olmo2_tiny_grads";
    QTest::newRow("gemma2_tiny: sandwich (1 + w) norms, both soft-caps, alternating window") << "gemma2_tiny"
                                                                                             << "gemma2_tiny_grads";
    QTest::newRow("gemma3_tiny: (1 + w) QK-norm, a RoPE base per layer kind") << "gemma3_tiny"
                                                                              << "gemma3_tiny_grads";
    QTest::newRow("smollm3_tiny: NoPE layers 1 and 3, a window on them") << "smollm3_tiny"
                                                                         << "smollm3_tiny_grads";
    QTest::newRow("phi3_tiny: fused qkv_proj and gate_up_proj, half the head turned, LongRoPE's short factors")
        << "phi3_tiny"
        << "phi3_tiny_grads";
    QTest::newRow("phi3_long_tiny: LongRoPE's long factors, a window on every layer") << "phi3_long_tiny"
                                                                                      << "phi3_long_tiny_grads";
    QTest::newRow("mistral_tiny: sliding window") << "mistral_tiny"
                                                  << "mistral_tiny_grads";
    // Mixtral: top-2 SwiGLU experts, gates renormalised over the two (the loss without the router's auxiliary term).
    QTest::newRow("qwen3_moe_tiny: QK-norm, renormalised top-2 experts under mlp.experts") << "qwen3_moe_tiny"
                                                                                           << "qwen3_moe_tiny_grads";
    QTest::newRow("gpt_oss_tiny: sinks, YaRN, a router bias, stacked clamped experts with biases")
        << "gpt_oss_tiny"
        << "gpt_oss_tiny_grads";
    QTest::newRow("mixtral_tiny: renormalised top-2 experts") << "mixtral_tiny"
                                                              << "mixtral_tiny_grads";
    // GPT-NeoX (Pythia): fused per-head Q/K/V, partial rotary, parallel or sequential residual; GPT-Neo: unscaled
    // scores, a local layer, learned positions.
    QTest::newRow("neox_tiny: parallel residual, partial rotary") << "neox_tiny"
                                                                  << "neox_tiny_grads";
    QTest::newRow("neox_seq_tiny: sequential residual, F16") << "neox_seq_tiny"
                                                             << "neox_seq_tiny_grads";
    QTest::newRow("neo_tiny: unscaled scores, a local layer") << "neo_tiny"
                                                              << "neo_tiny_grads";
    // T5: both stacks' bucket tables, RMS norms without mean, unscaled scores, cross-attention into the encoder; v1.0's
    // ReLU and tied head scaled by d_model^-½, v1.1's gated GELU and untied head.
    QTest::newRow("t5_tiny: v1.0, tied scaled head, two stacks") << "t5_tiny"
                                                                 << "t5_tiny_grads";
    QTest::newRow("t5v11_tiny: gated GELU, untied, BF16") << "t5v11_tiny"
                                                          << "t5v11_tiny_grads";
    // BERT: embeddings, segments and their LayerNorm, post-LN blocks with exact GELU, the masked-LM head (dense, GELU,
    // LayerNorm, tied decoder, output bias); the NSP head is outside the loss (zero gradients).
    QTest::newRow("bert_tiny: post-LN, MLM head, NSP head untouched") << "bert_tiny"
                                                                      << "bert_tiny_grads";
    QTest::newRow("bert_mlm_tiny: F16, two heads") << "bert_mlm_tiny"
                                                   << "bert_mlm_tiny_grads";
    QTest::newRow("bert_rel_tiny: relative_key, a key per distance") << "bert_rel_tiny"
                                                                     << "bert_rel_tiny_grads";
    QTest::newRow("bert_tiny on a pair: both segment embeddings") << "bert_tiny"
                                                                  << "bert_tiny_pair_grads";
}

void TestBackprop::matchesPyTorch()
{
    QFETCH(QString, model);
    QFETCH(QString, ref);
    const Case c = loadCase(model, ref);
    const Gradients g = runBackward(c);

    const Tensor loss = readNpy(dataPath(ref + "/loss.npy").toStdString());
    QCOMPARE(loss.rank(), 0);
    QVERIFY2(std::fabs(g.loss - loss.data()[0]) <= 1e-5 * std::fabs(loss.data()[0]),
        qPrintable(QString("loss %1, PyTorch %2").arg(g.loss).arg(loss.data()[0])));

    const QString why = testing::checkReferenceGradients(gradientsAsStored(*c.model, g),
        dataPath(ref), // every parameter, only parameters
        [&](const QString &name, const Tensor &got, const Tensor &want) {
            return compare(name + " (" + ref + ")", got, want);
        });
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

// A learned α per head (α = 1 + σ(a), Correia et al. 2019): the gradient of each head's a against a central difference
// of the loss, the model run again with a ± h. Float32 losses allow about three digits.
void TestBackprop::learnedAlphaGradientMatchesFiniteDifferences()
{
    Case c = loadCase("gpt2_tiny", "gpt2_tiny_grads");
    ModelConfig config = c.model->config;
    config.normaliser = Normaliser::LearnedEntmax;
    auto model = std::make_shared<Model>(Model::random(config, 3));
    for (BlockWeights &b : model->blocks)
        for (int h = 0; h < config.heads; ++h)
            b.weight(BlockPart::AlphaLogit).data()[h] = -1.5f + 0.8f * float(h); // α from 1.18 to 1.71
    for (BlockWeights &b : model->blocks) // larger scores than N(0, 0.02) gives: rows with zeros to find
        b.weight(BlockPart::Qkv).matrix() *= 40.0f;
    c.model = model;
    const Gradients g = runBackward(c);
    const auto lossWith = [&](int layer, int head, float a) {
        Model m = *model;
        m.blocks[size_t(layer)].weight(BlockPart::AlphaLogit).data()[head] = a;
        Engine engine(std::make_shared<Model>(std::move(m)), c.input);
        engine.runToEnd();
        Tensor losses({int64_t(c.targets.size())});
        return double(ops::crossentropy_forward(losses, engine.trace().tensor("logits"), c.targets));
    };
    int zeros = 0;
    for (int layer = 0; layer < config.layers; ++layer) {
        Engine engine(model, c.input);
        engine.runToEnd();
        const Tensor &probs = engine.trace().tensor("layer." + std::to_string(layer) + ".attn.probs");
        for (int64_t k = 0; k < probs.numel(); ++k)
            zeros += probs.data()[k] == 0.0f;
        const Tensor &grad = g.grads.at("h." + std::to_string(layer) + ".attn.alpha_logit");
        for (int h = 0; h < config.heads; ++h) {
            const float a = model->blocks[size_t(layer)].weight(BlockPart::AlphaLogit).data()[h], step = 1.0f / 32;
            const double numeric = (lossWith(layer, h, a + step) - lossWith(layer, h, a - step)) / (2.0 * step);
            QVERIFY2(std::fabs(numeric - grad.data()[h]) <= 2e-3 + 2e-2 * std::fabs(numeric),
                qPrintable(QString("layer %1 head %2: analytic %3, numeric %4")
                               .arg(layer)
                               .arg(h)
                               .arg(grad.data()[h])
                               .arg(numeric)));
        }
    }
    QVERIFY2(zeros > 0, "no probability is exactly 0: the sparse case is not exercised");
}

// Guards the comparison itself: every gradient has signal, and the unused vocabulary rows of wte only get
// the logits' contribution.
void TestBackprop::gradientsAreNotTrivial()
{
    const Case c = loadCase("gpt2_tiny", "gpt2_tiny_grads");
    const Gradients g = runBackward(c);
    for (const auto &[name, grad] : g.grads) {
        if (name == "wpe.weight") {
            const int64_t T = static_cast<int64_t>(c.input.tokens.size());
            QVERIFY(grad.matrix().topRows(T).norm() > 0.0f);
            QCOMPARE(grad.matrix().bottomRows(grad.dim(0) - T).norm(), 0.0f); // positions never used
            continue;
        }
        QVERIFY2(Eigen::Map<const Eigen::ArrayXf>(grad.data(), grad.numel()).abs().maxCoeff() > 1e-6f, name.c_str());
    }
    QVERIFY(g.loss > 0.0f);
}

void TestBackprop::accumulatingAddsAndZeroResets()
{
    const Case c = loadCase("variant", "variant_grads");
    Engine engine(c.model, c.input);
    engine.runToEnd();
    const Gradients once = backward(*c.model, c.input, engine.trace(), c.targets);
    Gradients twice;
    accumulateGradients(twice, *c.model, c.input, engine.trace(), c.targets);
    accumulateGradients(twice, *c.model, c.input, engine.trace(), c.targets);
    QCOMPARE(twice.loss, 2.0f * once.loss);
    const Tensor &w = twice.grads.at("h.1.mlp.c_fc.weight");
    for (int64_t i = 0; i < w.numel(); ++i)
        QCOMPARE(w.data()[i], 2.0f * once.grads.at("h.1.mlp.c_fc.weight").data()[i]);
    const float *before = w.data();
    twice.zero();
    QCOMPARE(twice.loss, 0.0f);
    QCOMPARE(twice.grads.at("h.1.mlp.c_fc.weight").data(), before); // the buffer is kept
    for (const auto &[name, g] : twice.grads)
        QVERIFY2(Eigen::Map<const Eigen::ArrayXf>(g.data(), g.numel()).abs().maxCoeff() == 0.0f, name.c_str());
    accumulateGradients(twice, *c.model, c.input, engine.trace(), c.targets);
    QCOMPARE(twice.grads.at("wte.weight").values(), once.grads.at("wte.weight").values());
}

void TestBackprop::badTargetsAndUntracedRunsAreErrors()
{
    const Case c = loadCase("gpt2_tiny", "gpt2_tiny_grads");
    Engine engine(c.model, c.input);
    engine.runToEnd();
    const Trace &trace = engine.trace();
    std::vector<int> shortTargets(c.targets.begin(), c.targets.end() - 1);
    QVERIFY(errorFrom([&] { backward(*c.model, c.input, trace, shortTargets); }).contains("one per input token"));
    std::vector<int> outside = c.targets;
    outside[1] = 50;
    QVERIFY(errorFrom([&] { backward(*c.model, c.input, trace, outside); }).contains("outside the vocabulary"));
    const std::vector<int> none(c.targets.size(), -1);
    QVERIFY(errorFrom([&] { backward(*c.model, c.input, trace, none); }).contains("every target is -1"));

    Engine untraced(c.model, c.input, {false});
    untraced.runToEnd();
    QVERIFY(errorFrom([&] { backward(*c.model, c.input, untraced.trace(), c.targets); }).contains("no tensor named"));
}

void TestBackprop::dumpWritesLossAndEveryGradient()
{
    QTemporaryDir dir;
    const Case c = loadCase("variant", "variant_grads");
    auto list = [](const std::vector<int> &v) {
        std::string s;
        for (int x : v)
            s.append(s.empty() ? "" : ",").append(std::to_string(x));
        return s;
    };
    const int code
        = dumpCommand({"--model", dataPath("variant").toStdString(), "--tokens", list(c.input.tokens), "--padding",
            list(c.input.padding), "--targets", list(c.targets), "--grads", "--out", dir.path().toStdString()});
    QCOMPARE(code, 0);
    const Tensor loss = readNpy(dir.filePath("loss.npy").toStdString());
    QCOMPARE(loss.shape(), Shape {});
    QVERIFY(std::fabs(loss.data()[0] - readNpy(dataPath("variant_grads/loss.npy").toStdString()).data()[0]) < 1e-4f);

    QFile f(dir.filePath("manifest.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject manifest = QJsonDocument::fromJson(f.readAll()).object();
    QCOMPARE(manifest["loss"].toObject()["value"].toDouble(), double(loss.data()[0]));
    QCOMPARE(intList(manifest["targets"]), c.targets);
    const QJsonArray grads = manifest["gradients"].toArray();
    QCOMPARE(grads.size(), qsizetype(c.model->parameters().size()));
    for (const QJsonValue &v : grads) {
        const QString name = v.toObject()["name"].toString();
        const Tensor got = readNpy(dir.filePath(name + ".npy").toStdString());
        const QString why
            = compare("dump " + name, got, readNpy(dataPath("variant_grads/" + name + ".npy").toStdString()));
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
    QVERIFY(QFile::exists(dir.filePath("grad.h.0.attn.c_attn.weight.npy")));
    QVERIFY(QFile::exists(dir.filePath("grad.wte.weight.npy")));
}

void TestBackprop::dumpRejectsTargetsOfTheWrongLength()
{
    QTemporaryDir dir;
    const std::string model = dataPath("gpt2_tiny").toStdString(), out = dir.path().toStdString();
    const QString tooFew = errorFrom([&] {
        dumpCommand({"--model", model, "--tokens", "3,17,42", "--targets", "17,42", "--grads", "--out", out});
    });
    QVERIFY2(tooFew.contains("2 ids for 3 input tokens"), qPrintable(tooFew));
    const QString bad = errorFrom([&] {
        dumpCommand({"--model", model, "--tokens", "3,17", "--targets", "17,-2", "--grads", "--out", out});
    });
    QVERIFY2(bad.contains("'-2'"), qPrintable(bad));
    QVERIFY(!QFile::exists(dir.filePath("loss.npy")));
}

void TestBackprop::cleanupTestCase()
{
    qInfo("largest max |diff| / max |ref| of any gradient: %.3g (%s)", g_worst, qPrintable(g_worstName));
}

QTEST_GUILESS_MAIN(TestBackprop)
#include "tst_backprop.moc"
