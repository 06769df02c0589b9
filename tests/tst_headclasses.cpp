// The head classes (analysis/headclasses.h): every score of every head against a PyTorch computation from the
// definitions (tests/tools/make_head_classes_reference.py) on a Llama (grouped-query attention), a Qwen2 (one K/V
// head, tied), a GPT-NeoX (per-head fused projection) and a Gemma 2 (sliding window, soft-capped scores); the repeated
// sequence's draw; heads set by hand to be one kind each (tests/tools/make_induction_model.py) score 1 for it and rank
// first; each score's range on every built-in model; the refusals.
#include "analysis/headclasses.h"
#include "errortesting.h"
#include "model/builtinmodels.h"
#include "referencetesting.h"
#include "tensortesting.h"
#include "testbundle.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <set>

using namespace atlas;
using namespace atlas::testing;

class TestHeadClasses : public QObject
{
    Q_OBJECT

private slots:
    void everyScoreMatchesPyTorch_data()
    {
        QTest::addColumn<QString>("model");
        for (const char *m : {"llama_tiny", "qwen2_tiny", "neox_tiny", "gemma2_tiny"})
            QTest::newRow(m) << QString(m);
    }

    void everyScoreMatchesPyTorch()
    {
        QFETCH(QString, model);
        QFile f(dataPath("head_classes/" + model + ".json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject want = QJsonDocument::fromJson(f.readAll()).object();
        const auto m = std::make_shared<const Model>(Model::load(dataPath(model).toStdString()));
        const HeadClasses got = classifyHeads(m, intList(want.value("tokens")));
        QCOMPARE(got.half, want.value("half").toInt());
        const QJsonObject scores = want.value("scores").toObject();
        for (int k = 0; k < kHeadClassCount; ++k) {
            const auto kind = HeadClass(k);
            const QJsonArray layers = scores.value(headClassName(kind)).toArray();
            QCOMPARE(layers.size(), got.layers);
            for (int l = 0; l < got.layers; ++l)
                for (int h = 0; h < got.heads; ++h) {
                    const double w = layers[l].toArray()[h].toDouble(), g = got.score(kind, l, h);
                    QVERIFY2(std::abs(g - w) < 2e-5,
                        qPrintable(QString("%1 %2 layer %3 head %4: %5, PyTorch %6")
                                       .arg(model, headClassName(kind))
                                       .arg(l)
                                       .arg(h)
                                       .arg(g)
                                       .arg(w)));
                }
        }
    }

    // induction_tiny's heads are set by hand to be one kind each: 0.0 previous token, 0.1 self, 1.0 induction (reading
    // what 0.0 wrote, and writing the token it attends to), 1.1 duplicate token. On every draw each scores 1 for its
    // kind and ranks first among the four heads, and the induction head's OV circuit copies.
    void handMadeHeadsScoreOneForTheirKindAndRankFirst()
    {
        const auto m = std::make_shared<const Model>(Model::load(dataPath("induction_tiny").toStdString()));
        const std::pair<HeadClass, int> known[] = {{HeadClass::PreviousToken, 0}, {HeadClass::Self, 1},
            {HeadClass::Induction, 2}, {HeadClass::DuplicateToken, 3}}; // head l.h as 2l + h
        for (const int half : {4, 12, 16})
            for (const uint64_t seed : {0, 1, 2}) {
                const HeadClasses got = classifyHeads(m, repeatedRandomTokens(m->config, half, seed));
                QCOMPARE(got.half, half);
                for (const auto &[kind, head] : known) {
                    const double score = got.score(kind, head / 2, head % 2);
                    QVERIFY2(std::abs(score - 1) < 1e-6,
                        qPrintable(QString("%1 of head %2.%3: %4")
                                       .arg(headClassName(kind))
                                       .arg(head / 2)
                                       .arg(head % 2)
                                       .arg(score)));
                    for (int other = 0; other < 4; ++other)
                        if (other != head)
                            QVERIFY(got.score(kind, other / 2, other % 2) < 0.6);
                }
                QVERIFY(got.score(HeadClass::Copying, 1, 0) > 0.999);
            }
    }

    // The sequence: distinct ordinary tokens (printable characters for a model of bytes), then the same again; the same
    // for the same seed, another for another.
    void theRepeatedSequenceIsDrawnAsDefined()
    {
        const std::shared_ptr<const Model> m = loadModel("austen");
        const std::vector<int> a = repeatedRandomTokens(m->config, 20, 7);
        QCOMPARE(int(a.size()), 40);
        QVERIFY(std::equal(a.begin(), a.begin() + 20, a.begin() + 20));
        QCOMPARE(std::set<int>(a.begin(), a.end()).size(), size_t(20));
        // austen reads bytes: printable characters only
        QVERIFY(std::all_of(a.begin(), a.end(), [](int t) { return t >= 32 && t <= 126; }));
        const Model llama = Model::load(dataPath("llama_tiny").toStdString()); // any of its 64 tokens
        const std::vector<int> b = repeatedRandomTokens(llama.config, 30, 7);
        QVERIFY(std::all_of(b.begin(), b.end(), [&](int t) { return t >= 0 && t < llama.config.ordinaryTokens(); }));
        QVERIFY(std::any_of(b.begin(), b.end(), [](int t) { return t < 32; }));
        QVERIFY(repeatedRandomTokens(m->config, 20, 7) == a);
        QVERIFY(repeatedRandomTokens(m->config, 20, 8) != a);
        ModelConfig small = m->config;
        small.context = 6;
        QCOMPARE(int(repeatedRandomTokens(small, 20, 7).size()), 6); // as much as the context holds
        small.context = 3;
        QVERIFY(errorFrom([&] { (void)repeatedRandomTokens(small, 20, 7); }).contains("context is 3 tokens"));
    }

    // Every built-in model: each attention score a share of the weight, in [0, 1], the local share at least the
    // self and previous-token shares it contains, and copying in [−1, 1].
    void everyBuiltInModelsScoresAreInRange()
    {
        for (const BuiltinModel &b : builtinModels()) {
            const std::shared_ptr<const Model> m = loadModel(b.name);
            if (m->gguf)
                continue;
            if (m->config.fourier.active()) { // FNet's blocks have no heads
                QVERIFY(errorFrom([&] {
                    (void)classifyHeads(m, repeatedRandomTokens(m->config, 16, 1));
                }).contains("Fourier transform (FNet)"));
                continue;
            }
            const HeadClasses got = classifyHeads(m, repeatedRandomTokens(m->config, 16, 1));
            const QString name = QString::fromStdString(b.name);
            for (int l = 0; l < got.layers; ++l)
                for (int h = 0; h < got.heads; ++h) {
                    for (int k = 0; k < kHeadClassCount - 1; ++k) {
                        const double s = got.score(HeadClass(k), l, h);
                        QVERIFY2(s >= -1e-6 && s <= 1 + 1e-6, qPrintable(name + " " + headClassName(HeadClass(k))));
                    }
                    QVERIFY(got.score(HeadClass::Local, l, h) + 1e-6
                        >= got.score(HeadClass::Self, l, h) + got.score(HeadClass::PreviousToken, l, h));
                    const double copying = got.score(HeadClass::Copying, l, h);
                    QVERIFY2(copying >= -1 - 1e-9 && copying <= 1 + 1e-9, qPrintable(name));
                }
        }
    }

    void refusesAnotherSequence()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse");
        QVERIFY(errorFrom([&] { (void)classifyHeads(m, {1, 2, 3, 4}); }).contains("second half repeats its first"));
        const std::atomic<bool> cancelled {true};
        QVERIFY(errorFrom([&] { (void)classifyHeads(m, {1, 2, 1, 2}, &cancelled); }).contains("cancelled"));
    }
};

QTEST_GUILESS_MAIN(TestHeadClasses)
#include "tst_headclasses.moc"
