// LayerNorm against BatchNorm (norms/normcomparison.h): both normalisations by hand on small matrices, the model's own
// norm recomputed to the trace's output on every norm placement and kind, and what the later tokens change.
#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "norms/normcomparison.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>

#include <cmath>

using namespace atlas;

class TestNormComparison : public QObject
{
    Q_OBJECT

private slots:
    // Two tokens of two features, ε next to nothing: each row and each column comes out as (−1, 1), and token 0's
    // BatchNorm over itself alone is 0, which moves it by 1 a feature; the last token's statistics are the whole
    // input's.
    void normalisesByHand()
    {
        NormMatrix x(2, 2);
        x << 1, 3, 5, 11;
        const NormComparison n = compareNorms(x, 1e-12f, false);
        NormMatrix expected(2, 2);
        expected << -1, 1, -1, 1;
        QCOMPARE(n.tokenNormed, expected);
        expected << -1, -1, 1, 1;
        QCOMPARE(n.batchNormed, expected);
        QCOMPARE(n.tokenMean, std::vector<float>({2, 8}));
        QCOMPARE(n.tokenScale, std::vector<float>({1, 3}));
        QCOMPARE(n.featureMean, std::vector<float>({3, 7}));
        QCOMPARE(n.featureScale, std::vector<float>({2, 4}));
        QCOMPARE(n.laterTokensChange.size(), size_t(2));
        QVERIFY(std::fabs(n.laterTokensChange[0] - 1) < 1e-9); // 1 − (ε's share)
        QCOMPARE(n.laterTokensChange[1], 0.0);

        NormMatrix row(1, 2);
        row << 3, 4; // RMSNorm: no mean taken away, divided by √(12.5)
        const NormComparison rms = compareNorms(row, 0.0f, true);
        QVERIFY(std::fabs(rms.tokenNormed(0, 0) - 3 / std::sqrt(12.5f)) < 1e-6f);
        QVERIFY(std::fabs(rms.tokenNormed(0, 1) - 4 / std::sqrt(12.5f)) < 1e-6f);
        // one token: BatchNorm's mean is the token itself, so it gives 0 everywhere
        const NormComparison one = compareNorms(row, 1e-5f, false);
        QCOMPARE(one.batchNormed, NormMatrix::Zero(1, 2).eval());
        QVERIFY_THROWS_EXCEPTION(Error, compareNorms(NormMatrix(0, 2), 1e-5f, false));
    }

    void recomputesTheModelsNorm_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("text");
        QTest::newRow("austen: LayerNorm before each sub-layer") << "austen"
                                                                 << "It is a truth universally";
        QTest::newRow("austen-mlm: LayerNorm after each residual add") << "austen-mlm"
                                                                       << "It is a truth universally";
        QTest::newRow("reverse-llama: RMSNorm") << "reverse-llama"
                                                << "abcdefg>";
        QTest::newRow("reverse-gemma2: RMSNorm of 1 + w, sandwich") << "reverse-gemma2"
                                                                    << "abcdefg>";
    }

    // γ ⊙ (the norm recomputed here) + β is the trace's own output of the block's first norm; every row of it is
    // standardised (mean 0 unless RMSNorm, variance just under 1 for ε), every column of BatchNorm's over the tokens.
    void recomputesTheModelsNorm()
    {
        QFETCH(QString, model);
        QFETCH(QString, text);
        const auto m = loadModel(model.toStdString());
        Input input;
        input.tokens = tokenizerForModel(*m)->encode(text.toStdString());
        Engine engine(m, input);
        engine.runToEnd();
        for (int layer = 0; layer < m->config.layers; ++layer) {
            const NormComparison n = compareNorms(*m, engine.trace(), layer);
            QCOMPARE(n.layer, layer);
            QCOMPARE(n.tokens, int(input.tokens.size()));
            QCOMPARE(n.rms, m->config.norm == NormKind::RmsNorm);
            QVERIFY2(n.traceDifference <= 1e-5, qPrintable(QString("layer %1: %2").arg(layer).arg(n.traceDifference)));
            for (int t = 0; t < n.tokens; ++t) {
                const auto row = n.tokenNormed.row(t);
                const double mean = row.mean(), square = row.squaredNorm() / n.width;
                QVERIFY(n.rms || std::fabs(mean) < 1e-5);
                QVERIFY2(square <= 1.0 + 1e-5 && square > 0.9, qPrintable(QString::number(square)));
            }
            for (int f = 0; f < n.width; ++f)
                QVERIFY(std::fabs(n.batchNormed.col(f).mean()) < 1e-4);
            QCOMPARE(n.laterTokensChange.back(), 0.0);
            QVERIFY(n.laterTokensChange.front() > 0.1);
        }
        QCOMPARE(compareNorms(*m, engine.trace(), 0).input, firstNormTensors(m->config, 0).first);
    }

    void refusesWhatItCannotCompare()
    {
        const auto m = loadModel("seq2seq-sort");
        QVERIFY(firstNormTensors(m->config, 0).first.empty());
        try {
            compareNorms(*m, Trace(), 0);
            QFAIL("an encoder-decoder was compared");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("one stack"), e.what());
        }
        const auto austen = loadModel("austen");
        try {
            compareNorms(*austen, Trace(), 0);
            QFAIL("an empty trace was read");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("the trace holds no"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestNormComparison)
#include "tst_normcomparison.moc"
