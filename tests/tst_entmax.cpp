// Sparsemax and α-entmax (src/core/ops/entmax.cpp) against references written from the papers
// (tests/tools/make_entmax_reference.py: sort-based sparsemax and 1.5-entmax, bisection for other α, autograd and
// finite differences), and the properties the lecture states: rows sum to 1 with exact zeros, α = 2 is sparsemax,
// α → 1 tends to softmax.

#include "io/npy.h"
#include "ops/ops.h"
#include "util/error.h"

#include "referencetesting.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace atlas;

namespace {

Tensor load(const char *name)
{
    return readNpy(std::string(ATLAS_TEST_DATA "/entmax/") + name + ".npy");
}

std::vector<float> values(const Tensor &t)
{
    return {t.data(), t.data() + t.numel()};
}

} // namespace

class TestEntmax : public QObject
{
    Q_OBJECT

private slots:
    void forwardMatchesThePapers();
    void backwardMatchesAutogradAndFiniteDifferences();
    void rowsSumToOneWithExactZeros();
    void alphaTwoIsSparsemaxAndNearOneIsSoftmax();
    void badAlphasAreRefused();
};

void TestEntmax::forwardMatchesThePapers()
{
    const Tensor scores = load("scores");
    Tensor probs(scores.shape());
    ops::entmax_forward(probs, scores, values(load("alpha")));
    const QString why = testing::compareToReference("probs", probs, load("probs"), 1e-5);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestEntmax::backwardMatchesAutogradAndFiniteDifferences()
{
    const Tensor scores = load("scores"), dout = load("dout");
    const std::vector<float> alpha = values(load("alpha"));
    Tensor probs(scores.shape()), dscores(scores.shape());
    ops::entmax_forward(probs, scores, alpha);
    std::vector<float> dalpha(alpha.size(), 0.0f);
    ops::entmax_backward(dscores, &dalpha, dout, probs, alpha);
    QString why = testing::compareToReference("dscores", dscores, load("dscores"), 1e-4);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    Tensor got({int64_t(dalpha.size())});
    std::copy(dalpha.begin(), dalpha.end(), got.data());
    why = testing::compareToReference("dalpha", got, load("dalpha"), 1e-4);
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
    const Tensor scores = load("scores");
    Tensor probs(scores.shape());
    ops::entmax_forward(probs, scores, values(load("alpha")));
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
    const Tensor scores = load("scores");
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
    const Tensor scores = load("scores");
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
