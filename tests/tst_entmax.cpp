// Sparsemax and α-entmax (src/core/ops/entmax.cpp) against references written from the papers
// (tests/tools/make_entmax_reference.py: sort-based sparsemax and 1.5-entmax, bisection for other α, autograd and
// finite differences), and the properties the lecture states: rows sum to 1 with exact zeros, α = 2 is sparsemax,
// α → 1 tends to softmax. The Sparsity view's counts (analysis/attentionsparsity.h) against a count of its own.

#include "analysis/attentionsparsity.h"
#include "engine/engine.h"
#include "io/npy.h"
#include "ops/ops.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"

#include "referencetesting.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

using namespace atlas;
using namespace atlas::testing;

namespace {

Tensor loadEntmax(const char *name)
{
    return readNpy(std::string(ATLAS_TEST_DATA "/entmax/") + name + ".npy");
}

} // namespace

class TestEntmax : public QObject
{
    Q_OBJECT

private slots:
    // Token lines says why its lines are faint: rows that spread their weight evenly (issue 58) against peaked ones.
    void rowPeaksTellUniformFromPeakedRows()
    {
        // Causal rows of 4 keys: row q reads q + 1 keys, evenly.
        const std::vector<float> even
            = {1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 1 / 3.f, 1 / 3.f, 1 / 3.f, 0, 0.25f, 0.25f, 0.25f, 0.25f};
        const RowPeaks flat = rowPeaks(even.data(), 4, 4, 0.3f);
        QVERIFY(std::abs(flat.meanLargest - flat.meanEven) < 1e-6);
        QVERIFY(std::abs(flat.meanEven - (1 + 0.5 + 1 / 3.0 + 0.25) / 4) < 1e-6);
        QVERIFY(std::abs(flat.visibleShare - 6.0 / 10.0) < 1e-6); // 1, 0.5, 0.5, ⅓ × 3 of the 10 weights above 0
        QVERIFY(flat.nearlyUniform());
        const std::vector<float> peaked = {0.97f, 0.01f, 0.01f, 0.01f, 0.01f, 0.91f, 0.04f, 0.04f};
        const RowPeaks sharp = rowPeaks(peaked.data(), 2, 4, 0.3f);
        QVERIFY(std::abs(sharp.meanLargest - 0.94) < 1e-6);
        QVERIFY(std::abs(sharp.meanEven - 0.25) < 1e-6);
        QVERIFY(!sharp.nearlyUniform());
        const std::vector<float> wide(100, 0.01f);
        QVERIFY(rowPeaks(wide.data(), 1, 100, 0.02f).nearlyUniform());
        QCOMPARE(rowPeaks(wide.data(), 1, 100, 0.02f).visibleShare, 0.0);
    }

    void forwardMatchesThePapers();
    void backwardMatchesAutogradAndFiniteDifferences();
    void rowsSumToOneWithExactZeros();
    void alphaTwoIsSparsemaxAndNearOneIsSoftmax();
    void badAlphasAreRefused();
    void sparsityCountsTheAllowedZeros();
};

void TestEntmax::forwardMatchesThePapers()
{
    const Tensor scores = loadEntmax("scores");
    Tensor probs(scores.shape());
    ops::entmax_forward(probs, scores, values(loadEntmax("alpha")));
    const QString why = testing::compareToReference("probs", probs, loadEntmax("probs"), 1e-5);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestEntmax::backwardMatchesAutogradAndFiniteDifferences()
{
    const Tensor scores = loadEntmax("scores"), dout = loadEntmax("dout");
    const std::vector<float> alpha = values(loadEntmax("alpha"));
    Tensor probs(scores.shape()), dscores(scores.shape());
    ops::entmax_forward(probs, scores, alpha);
    std::vector<float> dalpha(alpha.size(), 0.0f);
    ops::entmax_backward(dscores, &dalpha, dout, probs, alpha);
    QString why = testing::compareToReference("dscores", dscores, loadEntmax("dscores"), 1e-4);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    Tensor got({int64_t(dalpha.size())});
    std::copy(dalpha.begin(), dalpha.end(), got.data());
    why = testing::compareToReference("dalpha", got, loadEntmax("dalpha"), 1e-4);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

// Sparsemax of [3, 1, 0.2, −∞]: τ = 2, so p = [1, 0, 0, 0]; of [1, 0.8, 0, −1]: τ = 0.4, p = [0.6, 0.4, 0, 0].
void TestEntmax::rowsSumToOneWithExactZeros()
{
    const float inf = std::numeric_limits<float>::infinity();
    Tensor z({3, 4});
    const float rows[] = {3, 1, 0.2f, -inf, 1, 0.8f, 0, -1, -inf, -inf, -inf, -inf};
    std::copy(std::begin(rows), std::end(rows), z.data());
    Tensor p(z.shape());
    ops::sparsemax_forward(p, z);
    const float want[] = {1, 0, 0, 0, 0.6f, 0.4f, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 12; ++i)
        QVERIFY2(std::fabs(p.data()[i] - want[i]) < 1e-6f, qPrintable(QString("cell %1: %2").arg(i).arg(p.data()[i])));
    QCOMPARE(p.data()[2], 0.0f); // exactly
    const Tensor scores = loadEntmax("scores");
    Tensor probs(scores.shape());
    ops::entmax_forward(probs, scores, values(loadEntmax("alpha")));
    int zeros = 0;
    for (int64_t r = 0; r < probs.numel() / probs.shape().back(); ++r) {
        double sum = 0;
        for (int64_t j = 0; j < probs.shape().back(); ++j) {
            const float v = probs.data()[r * probs.shape().back() + j];
            sum += v;
            zeros += v == 0.0f && std::isfinite(scores.data()[r * probs.shape().back() + j]);
        }
        QVERIFY2(std::fabs(sum - 1.0) < 1e-6, qPrintable(QString("row %1 sums to %2").arg(r).arg(sum)));
    }
    QVERIFY2(zeros > 10, qPrintable(QString("%1 unmasked cells are exactly 0").arg(zeros)));
}

void TestEntmax::alphaTwoIsSparsemaxAndNearOneIsSoftmax()
{
    const Tensor scores = loadEntmax("scores");
    Tensor sparse(scores.shape()), two(scores.shape()), soft(scores.shape()), nearOne(scores.shape());
    ops::sparsemax_forward(sparse, scores);
    ops::entmax_forward(two, scores, {2.0f});
    QVERIFY(std::equal(sparse.data(), sparse.data() + sparse.numel(), two.data()));
    ops::softmax_forward(soft, scores);
    ops::entmax_forward(nearOne, scores, {1.001f});
    const QString why = testing::compareToReference("1.001-entmax against softmax", nearOne, soft, 5e-3);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestEntmax::badAlphasAreRefused()
{
    const Tensor scores = loadEntmax("scores");
    Tensor out(scores.shape());
    for (const std::vector<float> &alpha : {std::vector<float> {1.0f}, {2.5f}, {1.5f, 1.5f}, {std::nanf("")}}) {
        bool refused = false;
        try {
            ops::entmax_forward(out, scores, alpha);
        } catch (const Error &e) {
            refused = QString(e.what()).contains("α");
        }
        QVERIFY2(refused, qPrintable(QString("α = %1 (%2 values)").arg(alpha[0]).arg(alpha.size())));
    }
}

QTEST_APPLESS_MAIN(TestEntmax)
#include "tst_entmax.moc"

// The Sparsity view's numbers, counted again here from the probabilities and the causal rule (key j allowed for
// query i when j ≤ i): each head's α (1 + σ(a) learned), its exact zeros among the allowed pairs, its keys per query.
// Softmax's heads have α = 1 and no zero at ordinary scores (only an exponential below float's range gives one).
void TestEntmax::sparsityCountsTheAllowedZeros()
{
    ModelConfig config = ModelConfig::fromJson(R"({"n_layer": 2, "n_head": 4, "n_embd": 32, "vocab_size": 256,
        "n_positions": 32, "atlas_tokenizer": "bytes", "atlas_attention_normaliser": "entmax"})",
        "sparse.json");
    auto model = std::make_shared<Model>(Model::random(config, 5));
    for (BlockWeights &b : model->blocks) {
        for (int h = 0; h < config.heads; ++h)
            b.weight(BlockPart::AlphaLogit).data()[h] = -1.5f + 0.8f * float(h);
        b.weight(BlockPart::Qkv).matrix() *= 40.0f; // scores large enough for rows with zeros
    }
    Input input;
    for (int t = 0; t < 20; ++t)
        input.tokens.push_back((7 * t + 3) % 256);
    Engine engine(model, input);
    engine.runToEnd();
    const AttentionSparsity s = attentionSparsity(*model, engine.trace());
    QCOMPARE(int(s.heads.size()), config.layers);
    int64_t zeros = 0;
    for (int layer = 0; layer < config.layers; ++layer) {
        const Tensor &probs = engine.trace().tensor("layer." + std::to_string(layer) + ".attn.probs");
        for (int h = 0; h < config.heads; ++h) {
            const HeadSparsity &head = s.heads[size_t(layer)][size_t(h)];
            const float a = model->blocks[size_t(layer)].weight(BlockPart::AlphaLogit).data()[h];
            QCOMPARE(float(head.alpha), std::clamp(1.0f + 1.0f / (1.0f + std::exp(-a)), 1.001f, 2.0f));
            int64_t headZeros = 0, support = 0;
            for (int i = 0; i < 20; ++i)
                for (int j = 0; j <= i; ++j) {
                    const bool zero = probs.slice(h)(i, j) == 0.0f;
                    headZeros += zero;
                    support += !zero;
                }
            QCOMPARE(head.allowedPairs, int64_t(20 * 21 / 2));
            QCOMPARE(head.zeros, headZeros);
            QCOMPARE(head.meanSupport(), double(support) / 20.0);
            zeros += headZeros;
        }
    }
    QCOMPARE(s.zeros, zeros);
    QVERIFY2(zeros > 50, qPrintable(QString("%1 allowed pairs are exactly 0").arg(zeros)));

    config.normaliser = Normaliser::Softmax; // at GPT-2's initial scale: scores far from exp's underflow
    Engine softEngine(std::make_shared<Model>(Model::random(config, 5)), input);
    softEngine.runToEnd();
    const AttentionSparsity none = attentionSparsity(softEngine.model(), softEngine.trace());
    QCOMPARE(none.zeros, int64_t(0));
    QCOMPARE(none.heads[1][3].alpha, 1.0);
}
