// Direct logit attribution (analysis/logitattribution.h): every part against a PyTorch computation from its definition
// (tests/tools/make_dla_reference.py) for a Llama (attention biases), a GPT-NeoX (parallel blocks, LayerNorm), an
// OLMo 2 and a Gemma 2 (norms on the sub-layers' outputs; Gemma's soft-capped logits) and a T5 decoder (its
// cross-attention heads); on every built-in model the parts sum to the model's own logit, or the model is refused with
// the reason; a run kept on demand gives the same parts as a whole one.
#include "analysis/logitattribution.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "model/builtinmodels.h"
#include "referencetesting.h"
#include "tensortesting.h"
#include "testbundle.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

using namespace atlas;
using namespace atlas::testing;

namespace {

// float32's rounding through a few layers of a tiny model, against float64.
bool attributionNear(double got, double want)
{
    return std::abs(got - want) <= 2e-5 + 2e-5 * std::abs(want);
}

LogitAttribution attribute(const Engine &engine, const Model &model, const Input &input, LogitAttributionOptions o)
{
    return logitAttribution(model, engine.program(), engine.trace(), input, o);
}

// A mixture-of-experts layer's per-expert parts sum to its feed-forward part; returns how many layers had them.
int checkExperts(const LogitAttribution &got, const QString &name)
{
    int split = 0;
    for (int l = 0; l < got.layers; ++l) {
        if (got.experts[size_t(l)].empty())
            continue;
        double sum = 0;
        for (const LogitAttribution::ExpertPart &e : got.experts[size_t(l)])
            sum += e.value;
        const double whole = got.feedForward[size_t(l)];
        if (std::abs(sum - whole) > 1e-4 * (1 + std::abs(whole)))
            QTest::qFail(qPrintable(QString("%1 layer %2: experts sum to %3, the feed-forward %4")
                                        .arg(name)
                                        .arg(l)
                                        .arg(sum)
                                        .arg(whole)),
                __FILE__, __LINE__);
        ++split;
    }
    return split;
}

} // namespace

class TestLogitAttribution : public QObject
{
    Q_OBJECT

private slots:
    void everyPartMatchesPyTorch_data()
    {
        QTest::addColumn<QString>("model");
        for (const char *m : {"llama_tiny", "neox_tiny", "olmo2_tiny", "gemma2_tiny", "t5_tiny"})
            QTest::newRow(m) << QString(m);
    }

    void everyPartMatchesPyTorch()
    {
        QFETCH(QString, model);
        QFile f(dataPath("dla/" + model + ".json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray cases = QJsonDocument::fromJson(f.readAll()).array();
        QVERIFY(!cases.isEmpty());
        const auto m = std::make_shared<const Model>(Model::load(dataPath(model).toStdString()));
        const Input input = familyReferenceInput(model);
        Engine engine(m, input);
        engine.runToEnd();
        for (const QJsonValue &value : cases) {
            const QJsonObject want = value.toObject();
            const LogitAttribution got = attribute(engine, *m, input,
                {want.value("position").toInt(), want.value("target").toInt(), want.value("contrast").toInt()});
            const QString where = QString("%1 at position %2").arg(model).arg(want.value("position").toInt());
            QVERIFY2(attributionNear(got.embedding, want.value("embedding").toDouble()), qPrintable(where));
            const auto compareHeads = [&](const char *key, const std::vector<double> &heads) {
                const QJsonArray layers = want.value(key).toArray();
                QCOMPARE(layers.size(), got.layers);
                for (int l = 0; l < got.layers; ++l)
                    for (int h = 0; h < got.heads; ++h) {
                        const double w = layers[l].toArray()[h].toDouble(), g = heads[size_t(l * got.heads + h)];
                        QVERIFY2(attributionNear(g, w),
                            qPrintable(QString("%1: %2 layer %3 head %4: %5, PyTorch %6")
                                           .arg(where, key)
                                           .arg(l)
                                           .arg(h)
                                           .arg(g)
                                           .arg(w)));
                    }
            };
            compareHeads("attn.heads", got.selfHeads);
            QCOMPARE(got.crossAttention, want.contains("cross.heads"));
            if (got.crossAttention)
                compareHeads("cross.heads", got.crossHeads);
            for (int l = 0; l < got.layers; ++l) {
                QVERIFY2(attributionNear(got.attentionBias[size_t(l)], want.value("bias").toArray()[l].toDouble()),
                    qPrintable(where));
                QVERIFY2(attributionNear(got.feedForward[size_t(l)], want.value("mlp").toArray()[l].toDouble()),
                    qPrintable(where));
            }
            QVERIFY(attributionNear(got.normShift, want.value("norm_shift").toDouble()));
            QVERIFY2(attributionNear(got.modelLogit, want.value("logit").toDouble()), qPrintable(where));
            QVERIFY2(attributionNear(got.sum, got.modelLogit), qPrintable(where));
            QVERIFY(got.streamGap < 1e-5);
        }
    }

    // Every built-in model the attribution reads: the parts sum to the model's own logit for its top token against
    // its second; the others are refused with the reason, never with wrong parts.
    void everyBuiltInModelsPartsSumToItsLogit()
    {
        int attributed = 0;
        for (const BuiltinModel &b : builtinModels()) {
            const std::shared_ptr<const Model> m = loadModel(b.name);
            if (m->gguf || m->config.vocab > 4096)
                continue; // the GGUF copies are the same layouts as their models
            Input input;
            for (int t = 0; t < std::min(12, m->config.context); ++t)
                input.tokens.push_back((7 * t + 3) % std::min(m->config.vocab, 200));
            if (m->config.isEncoderDecoder())
                input.source = {4, 8, 6, 10};
            Engine engine(m, input);
            engine.runToEnd();
            const std::string why = logitAttributionProblem(m->config, engine.program(), engine.trace());
            const QString name = QString::fromStdString(b.name);
            if (!why.empty()) {
                QVERIFY2(m->config.layerNorm == LayerNormPlacement::Post || m->config.reversible
                        || m->config.funnel.active() || m->config.family == Family::Bert || m->config.act.enabled,
                    qPrintable(name + ": " + QString::fromStdString(why)));
                QVERIFY(
                    errorFrom([&] { (void)attribute(engine, *m, input, {}); }).contains("direct logit attribution"));
                continue;
            }
            // The split is of the logits before a soft-cap (Gemma 2's head.logits).
            const Tensor &logits = engine.trace().tensor(m->config.logitSoftcap > 0 ? "head.logits" : "logits");
            const int V = int(logits.dim(1));
            const float *z = logits.data() + (logits.dim(0) - 1) * V;
            std::vector<int> order(static_cast<size_t>(V));
            std::iota(order.begin(), order.end(), 0);
            std::partial_sort(order.begin(), order.begin() + 2, order.end(), [z](int a, int c) { return z[a] > z[c]; });
            const LogitAttribution got = attribute(engine, *m, input, {-1, order[0], order[1]});
            QVERIFY2(std::abs(got.modelLogit - (double(z[order[0]]) - z[order[1]])) < 1e-4, qPrintable(name));
            QVERIFY2(std::abs(got.sum - got.modelLogit) < 1e-3 * std::max(1.0, std::abs(got.modelLogit)),
                qPrintable(name + QString(": parts %1, logit %2").arg(got.sum).arg(got.modelLogit)));
            QVERIFY2(got.streamGap < 1e-4, qPrintable(name));
            QCOMPARE(checkExperts(got, name) > 0, m->config.experts > 0);
            ++attributed;
        }
        QVERIFY2(attributed >= 10, qPrintable(QString("%1 built-in models attributed").arg(attributed)));
    }

    // Every GGUF fixture (each architecture llama.cpp writes, F32 and quantized: Phi-3's fused projections, gpt-oss's
    // sinks and MXFP4 experts, Qwen3's mixture of experts, Gemma 3's sandwich norms): the parts sum to the logit.
    void everyGgufArchitecturesPartsSumToItsLogit()
    {
        const QDir dir(dataPath("gguf/models"));
        const QStringList files = dir.entryList({"*.gguf"}, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 20);
        for (const QString &file : files) {
            const auto m = std::make_shared<const Model>(Model::load(dir.filePath(file).toStdString()));
            Input input {{1, 5, 9, 3, 7, 2}, {}};
            if (m->config.isEncoderDecoder()) // a t5 file: the decoder reads the source
                input.source = std::exchange(input.tokens, {m->config.decoderStart, 5, 9, 3});
            Engine engine(m, input);
            engine.runToEnd();
            const LogitAttribution got = attribute(engine, *m, input, {-1, 4, 11});
            QVERIFY2(std::abs(got.sum - got.modelLogit) < 1e-3 * std::max(1.0, std::abs(got.modelLogit)),
                qPrintable(file + QString(": parts %1, logit %2").arg(got.sum).arg(got.modelLogit)));
            QVERIFY2(got.streamGap < 1e-4, qPrintable(file));
            QCOMPARE(checkExperts(got, file) > 0, m->config.experts > 0);
        }
    }

    // A run that keeps attention on demand (no T × T tensors; the logits through the head when asked) gives the same
    // parts: the attribution reads contexts and streams, which every run keeps.
    void aRunKeptOnDemandGivesTheSameParts()
    {
        const auto m = std::make_shared<const Model>(Model::load(dataPath("gemma2_tiny").toStdString()));
        const Input input = familyReferenceInput("gemma2_tiny");
        Engine whole(m, input);
        whole.runToEnd();
        EngineOptions options;
        options.attention = EngineOptions::Attention::OnDemand;
        Engine onDemand(m, input, options);
        onDemand.runToEnd();
        const LogitAttribution a = attribute(whole, *m, input, {-1, 12, 30});
        const LogitAttribution b = attribute(onDemand, *m, input, {-1, 12, 30});
        QCOMPARE(a.selfHeads.size(), b.selfHeads.size());
        for (size_t i = 0; i < a.selfHeads.size(); ++i)
            QVERIFY(std::abs(a.selfHeads[i] - b.selfHeads[i]) < 1e-6);
        QVERIFY(std::abs(a.modelLogit - b.modelLogit) < 1e-4);
    }

    void refusesWhatItCannotSplit()
    {
        const auto bert = std::make_shared<const Model>(Model::load(dataPath("bert_mlm_tiny").toStdString()));
        const Input bertInput = familyReferenceInput("bert_mlm_tiny");
        Engine bertEngine(bert, bertInput);
        bertEngine.runToEnd();
        QVERIFY(QString::fromStdString(logitAttributionProblem(bert->config, bertEngine.program(), bertEngine.trace()))
                    .contains("masked-LM head"));

        const auto m = std::make_shared<const Model>(Model::load(dataPath("llama_tiny").toStdString()));
        const Input input = familyReferenceInput("llama_tiny");
        Engine engine(m, input);
        QVERIFY(errorFrom([&] { (void)attribute(engine, *m, input, {}); }).contains("step past"));
        engine.runToEnd();
        QVERIFY(errorFrom([&] {
            (void)attribute(engine, *m, input, {-1, 64, -1});
        }).contains("target token id 64 is outside the vocabulary [0, 64)"));
        QVERIFY(errorFrom([&] { (void)attribute(engine, *m, input, {-1, 3, -2}); }).contains("contrast token id -2"));
        QVERIFY(errorFrom([&] {
            (void)attribute(engine, *m, input, {8, 3, -1});
        }).contains("position 8 is outside the input (0..7)"));
    }
};

QTEST_GUILESS_MAIN(TestLogitAttribution)
#include "tst_logitattribution.moc"
