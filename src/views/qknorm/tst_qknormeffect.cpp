// The QK-norm view's numbers (qknorm/qknormeffect.h): each head's query and key lengths are those of the traced
// vectors, its scores lie within the bound its input's lengths allow and that within the bound its γ alone allows
// (computed here from the weights, per head for Qwen3 and per slice of the whole projection for OLMo 2), and
// QK-norm makes the scores ignore the size of W_q, which a model without it multiplies them by.
#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "qknorm/qknormeffect.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "trace/names.h"
#include "util/error.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace atlas;

namespace {

const std::vector<int> kReverseQuestion = {100, 115, 102, 97, 99, 100, 100, 62, 100, 100, 99, 97, 102, 115, 100};

std::shared_ptr<const Model> qkModel(const QString &name)
{
    return loadModel(name.endsWith("_tiny") ? testing::dataPath(name).toStdString() : name.toStdString());
}

std::vector<int> qkTokens(const Model &model)
{
    if (model.config.vocab == 256)
        return kReverseQuestion;
    std::vector<int> tokens;
    for (int t = 0; t < 11; ++t)
        tokens.push_back((7 * t + 3) % model.config.vocab);
    return tokens;
}

Trace qkTrace(std::shared_ptr<const Model> model)
{
    Engine engine(model, Input {qkTokens(*model), {}, {}});
    engine.runToEnd();
    return engine.trace();
}

float largestAbs(const float *values, int64_t count)
{
    float largest = 0;
    for (int64_t i = 0; i < count; ++i)
        largest = std::max(largest, std::abs(values[i]));
    return largest;
}

} // namespace

class TestQkNormEffect : public QObject
{
    Q_OBJECT

private slots:
    void boundsHold_data()
    {
        QTest::addColumn<QString>("model");
        QTest::newRow("qwen3_tiny (per head, random weights with biases)") << "qwen3_tiny";
        QTest::newRow("olmo2_tiny (over the whole projection)") << "olmo2_tiny";
        QTest::newRow("reverse-qwen3 (trained)") << "reverse-qwen3";
        QTest::newRow("reverse-llama (no QK-norm)") << "reverse-llama";
    }

    // Lengths as the traced vectors', scores inside the input's bound, which lies inside γ's; γ's bound from the
    // weights by hand.
    void boundsHold()
    {
        QFETCH(QString, model);
        const std::shared_ptr<const Model> m = qkModel(model);
        const ModelConfig &c = m->config;
        const Trace trace = qkTrace(m);
        for (int layer = 0; layer < c.layers; ++layer) {
            const QkNormEffect e = qkNormEffect(*m, trace, layer);
            QCOMPARE(e.kind, c.qkNorm);
            QCOMPARE(int(e.heads.size()), c.heads);
            const int64_t d = c.headDim(), group = c.heads / c.kvHeadCount();
            QCOMPARE(e.dim, int(d));
            QCOMPARE(e.scale, float(1.0 / std::sqrt(double(d))));
            const Tensor &q = trace.tensor(names::queriesOf(layer, false));
            const Tensor &kMet = trace.tensor(names::keysOf(layer, c.rotatesQueriesAndKeys()));
            const BlockWeights &b = m->blocks[size_t(layer)];
            for (int h = 0; h < c.heads; ++h) {
                const QkNormHead &head = e.heads[size_t(h)];
                for (int t : {0, int(q.dim(1)) - 1}) {
                    QCOMPARE(head.queryBefore[size_t(t)], float(q.slice(h).row(t).norm()));
                    QVERIFY(std::abs(head.keyAfter[size_t(t)] - kMet.slice(h).row(t).norm()) < 1e-5f);
                }
                const float slack = 1.0f + 1e-5f;
                QVERIFY2(std::max(std::abs(head.lowest), std::abs(head.highest)) <= head.inputBound * slack,
                    qPrintable(QString("layer %1 head %2: %3 %4 against %5")
                                   .arg(layer)
                                   .arg(h)
                                   .arg(head.lowest)
                                   .arg(head.highest)
                                   .arg(head.inputBound)));
                QVERIFY(head.highest > head.lowest);
                if (c.qkNorm == QkNorm::None) {
                    QCOMPARE(head.weightBound, 0.0f);
                    for (size_t t = 0; t < head.queryAfter.size(); ++t) // RoPE turns q without changing its length
                        QVERIFY(std::abs(head.queryAfter[t] - head.queryBefore[t]) < 1e-5f * head.queryBefore[t]);
                    continue;
                }
                const bool slices = c.qkNorm == QkNorm::Projections;
                const int64_t g = h / group;
                const double nq = double(slices ? c.heads * d : d), nk = double(slices ? c.kvHeadCount() * d : d);
                const double gq = largestAbs(b.weight(BlockPart::QNorm).data() + (slices ? h * d : 0), d);
                const double gk = largestAbs(b.weight(BlockPart::KNorm).data() + (slices ? g * d : 0), d);
                QVERIFY(std::abs(head.weightBound - std::sqrt(nq) * gq * std::sqrt(nk) * gk / std::sqrt(double(d)))
                    < 1e-4 * head.weightBound);
                QVERIFY(head.inputBound <= head.weightBound * slack);
                QVERIFY(largest(head.queryAfter) <= head.queryLimit * slack);
                QVERIFY(largest(head.keyAfter) <= head.keyLimit * slack);
            }
        }
        // A run that keeps its attention on demand: the same ranges, from scores recomputed a block at a time.
        EngineOptions lazy;
        lazy.attention = EngineOptions::Attention::OnDemand;
        Engine onDemand(m, Input {qkTokens(*m), {}, {}}, lazy);
        onDemand.runToEnd();
        QVERIFY(!onDemand.trace().contains("layer.0.attn.masked"));
        for (int layer = 0; layer < c.layers; ++layer) {
            const QkNormEffect e = qkNormEffect(*m, trace, layer), o = qkNormEffect(*m, onDemand.trace(), layer);
            for (int h = 0; h < c.heads; ++h) {
                QVERIFY(std::abs(o.heads[size_t(h)].lowest - e.heads[size_t(h)].lowest) < 1e-5f);
                QVERIFY(std::abs(o.heads[size_t(h)].highest - e.heads[size_t(h)].highest) < 1e-5f);
            }
        }
    }

    // Layer 0's W_q a hundred times larger: Qwen3's scores stay as they were (the norm divides the factor out; only
    // ε sees it), Llama's grow a hundredfold. γ's bound does not move.
    void qkNormIgnoresTheSizeOfTheQueryProjection_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("normed");
        QTest::newRow("reverse-qwen3") << "reverse-qwen3" << true;
        QTest::newRow("reverse-llama") << "reverse-llama" << false;
    }

    void qkNormIgnoresTheSizeOfTheQueryProjection()
    {
        QFETCH(QString, model);
        QFETCH(bool, normed);
        const std::shared_ptr<const Model> m = qkModel(model);
        auto larger = std::make_shared<Model>(*m);
        for (float &w : larger->blocks[0].weight(BlockPart::Q).values())
            w *= 100.0f;
        QVERIFY(larger->blocks[0].bias(BlockPart::Q).empty());
        const Trace before = qkTrace(m), after = qkTrace(larger);
        // Layer 0's scores are q·k of the scaled W_q; with QK-norm nothing after them changes either.
        for (int layer = 0; layer < (normed ? m->config.layers : 1); ++layer) {
            const QkNormEffect e0 = qkNormEffect(*m, before, layer), e1 = qkNormEffect(*larger, after, layer);
            for (size_t h = 0; h < e0.heads.size(); ++h) {
                const QkNormHead &h0 = e0.heads[h], &h1 = e1.heads[h];
                QCOMPARE(h1.weightBound, h0.weightBound);
                const float factor = normed ? 1.0f : 100.0f;
                QVERIFY2(std::abs(h1.highest - factor * h0.highest) < 1e-3f * factor * std::abs(h0.highest)
                        && std::abs(h1.lowest - factor * h0.lowest) < 1e-3f * factor * std::abs(h0.lowest),
                    qPrintable(QString("layer %1 head %2: %3..%4 from %5..%6")
                                   .arg(layer)
                                   .arg(h)
                                   .arg(h1.lowest)
                                   .arg(h1.highest)
                                   .arg(h0.lowest)
                                   .arg(h0.highest)));
                const float grown = layer == 0 ? 100.0f : 1.0f; // the queries before the norm
                QVERIFY(std::abs(largest(h1.queryBefore) - grown * largest(h0.queryBefore))
                    < 1e-4f * grown * largest(h0.queryBefore));
            }
        }
    }

    void refusesScoresThatAreNotQueryKeyAlone()
    {
        QVERIFY(qkNormEffectProblem(*loadModel("reverse-alibi"), 0).find("position bias") != std::string::npos);
        QVERIFY(qkNormEffectProblem(*loadModel("seq2seq-sort"), 0).find("encoder–decoder") != std::string::npos);
        QVERIFY(qkNormEffectProblem(*loadModel("reverse-qwen3"), 2).find("layers 0 to 1") != std::string::npos);
        const std::shared_ptr<const Model> m = loadModel("reverse-qwen3");
        Engine engine(m, Input {kReverseQuestion, {}, {}});
        engine.runTo(engine.program().producerOf("layer.1.attn.q_norm") + 1);
        QVERIFY_THROWS_EXCEPTION(Error, qkNormEffect(*m, engine.trace(), 1));
        QVERIFY(qkNormEffect(*m, engine.trace(), 0).heads.size() == 4);
    }

private:
    static float largest(const std::vector<float> &values) { return *std::max_element(values.begin(), values.end()); }
};

QTEST_GUILESS_MAIN(TestQkNormEffect)
#include "tst_qknormeffect.moc"
