// Every operation's backward against finite differences of its forward (src/core/ops/ops.h).
//
// The ops compute in float32, so the check is built to keep float noise far below the tolerance:
// - the scalar checked is L = Σ w ⊙ out, summed in double with fixed random weights w (so dout = w);
// - inputs are multiples of 2⁻¹⁰ and the steps h are powers of two, so x ± h and x ± 2h are exact floats;
// - the derivative is the 4-point central difference (8(L(x+h) − L(x−h)) − (L(x+2h) − L(x−2h))) / 12h, whose
//   truncation error is O(h⁴), which allows a step as large as 2⁻⁶ where float rounding of L matters little.
// The observed max |numeric − analytic| / max |analytic| stays around 1e-5; the tolerance is 1e-3, and
// gradcheckCatchesWrongGradients shows that a 1 % error, a dropped term or a transposed operand fail it.

#include "ops/ops.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

using namespace atlas;

namespace {

constexpr double kTolerance = 1e-3; // on max |numeric − analytic| / max |analytic|, per tensor
constexpr float kStep = 1.0f / 64; // 2⁻⁶
const float kNegInf = -std::numeric_limits<float>::infinity();

double g_worst = 0.0; // the largest relative error of any passing check, printed at the end
QString g_worstName;

// Entries uniform in [-scale, scale], rounded to multiples of 2⁻¹⁰.
Tensor randomTensor(const Shape &shape, std::mt19937 &rng, float scale = 1.0f)
{
    std::uniform_real_distribution<float> u(-scale, scale);
    Tensor t(shape);
    for (float &v : t.values())
        v = std::round(u(rng) * 1024.0f) / 1024.0f;
    return t;
}

// Σ w ⊙ out in double over the finite cells of out (masked −∞ cells carry no loss).
double weighted(const Tensor &out, const Tensor &w)
{
    double s = 0.0;
    for (int64_t i = 0; i < out.numel(); ++i)
        if (std::isfinite(out.data()[i]))
            s += double(out.data()[i]) * double(w.data()[i]);
    return s;
}

struct CheckResult
{
    double maxDiff = 0.0, maxAnalytic = 0.0;
    int64_t worst = -1;
    double numeric = 0.0, analytic = 0.0;
    double relative() const { return maxDiff / std::max(maxAnalytic, 1e-30); }
};

// Compares `analytic` with the finite-difference gradient of `loss` with respect to every element of x.
// An element of x that is −∞ cannot be perturbed; its analytic gradient must be exactly 0.
CheckResult gradcheck(const std::function<double()> &loss, Tensor &x, const Tensor &analytic, float h = kStep)
{
    CheckResult r;
    for (int64_t i = 0; i < x.numel(); ++i) {
        const float x0 = x.data()[i];
        const double a = analytic.data()[i];
        double numeric = 0.0;
        if (std::isfinite(x0)) {
            auto at = [&](float v) {
                x.data()[i] = v;
                return loss();
            };
            numeric = (8.0 * (at(x0 + h) - at(x0 - h)) - (at(x0 + 2 * h) - at(x0 - 2 * h))) / (12.0 * double(h));
            x.data()[i] = x0;
        }
        r.maxAnalytic = std::max(r.maxAnalytic, std::fabs(a));
        const double diff = std::isfinite(x0) ? std::fabs(numeric - a) : (a == 0.0 ? 0.0 : HUGE_VAL);
        if (diff > r.maxDiff || r.worst < 0) {
            r.maxDiff = diff;
            r.worst = i;
            r.numeric = numeric;
            r.analytic = a;
        }
    }
    return r;
}

// Empty when the check passes; records the worst passing relative error.
QString verdict(const QString &name, const CheckResult &r, double tolerance = kTolerance)
{
    if (r.maxAnalytic == 0.0)
        return name + ": the analytic gradient is all zero (the check would prove nothing)";
    if (r.relative() > tolerance || !std::isfinite(r.relative()))
        return QString("%1: max |numeric - analytic| %2 = %3 x max |analytic| %4 (tolerance %5); element %6: "
                       "numeric %7, analytic %8")
            .arg(name)
            .arg(r.maxDiff)
            .arg(r.relative())
            .arg(r.maxAnalytic)
            .arg(tolerance)
            .arg(r.worst)
            .arg(r.numeric)
            .arg(r.analytic);
    if (r.relative() > g_worst) {
        g_worst = r.relative();
        g_worstName = name;
    }
    return {};
}

#define GRADCHECK(name, loss, x, analytic)                                                                             \
    do {                                                                                                               \
        const QString why = verdict(name, gradcheck(loss, x, analytic));                                               \
        QVERIFY2(why.isEmpty(), qPrintable(why));                                                                      \
    } while (0)

} // namespace

class TestGradcheck : public QObject
{
    Q_OBJECT

private slots:
    void embedding();
    void positionsLearned();
    void add();
    void layernorm();
    void linear();
    void logits();
    void splitAndMergeHeads();
    void attentionScores();
    void attentionMask_data();
    void attentionMask();
    void softmax();
    void attentionContext();
    void activations_data();
    void activations();
    void crossentropy();
    void crossentropyIgnoresTargetsOfMinusOne();
    void gradcheckCatchesWrongGradients();
    void cleanupTestCase();

private:
    std::mt19937 m_rng {2024};
};

void TestGradcheck::embedding()
{
    const std::vector<int> tokens = {3, 1, 3, 0, 5}; // token 3 twice: its row collects both
    Tensor wte = randomTensor({7, 4}, m_rng), w = randomTensor({5, 4}, m_rng);
    auto loss = [&] {
        Tensor out({5, 4});
        ops::embedding_forward(out, wte, tokens);
        return weighted(out, w);
    };
    Tensor dwte({7, 4});
    ops::embedding_backward(dwte, w, tokens);
    GRADCHECK("embedding dwte", loss, wte, dwte);
    QCOMPARE(dwte.matrix().row(6).squaredNorm(), 0.0f); // a token not in the input gets nothing
}

void TestGradcheck::positionsLearned()
{
    Tensor wpe = randomTensor({8, 4}, m_rng), w = randomTensor({5, 4}, m_rng);
    auto loss = [&] {
        Tensor out({5, 4});
        ops::positions_learned_forward(out, wpe);
        return weighted(out, w);
    };
    Tensor dwpe({8, 4});
    ops::positions_learned_backward(dwpe, w);
    GRADCHECK("positions dwpe", loss, wpe, dwpe);
}

void TestGradcheck::add()
{
    Tensor a = randomTensor({3, 4}, m_rng), b = randomTensor({3, 4}, m_rng), w = randomTensor({3, 4}, m_rng);
    auto loss = [&] {
        Tensor out({3, 4});
        ops::add_forward(out, a, b);
        return weighted(out, w);
    };
    Tensor da({3, 4}), db({3, 4});
    ops::add_backward(da, db, w);
    GRADCHECK("add da", loss, a, da);
    GRADCHECK("add db", loss, b, db);
}

void TestGradcheck::layernorm()
{
    Tensor x = randomTensor({4, 8}, m_rng, 2.0f), gamma = randomTensor({8}, m_rng), beta = randomTensor({8}, m_rng);
    Tensor w = randomTensor({4, 8}, m_rng);
    auto loss = [&] {
        Tensor out({4, 8});
        ops::layernorm_forward(out, x, gamma, beta, 1e-5f);
        return weighted(out, w);
    };
    Tensor dx({4, 8}), dgamma({8}), dbeta({8});
    ops::layernorm_backward(dx, dgamma, dbeta, w, x, gamma, 1e-5f);
    GRADCHECK("layernorm dinp", loss, x, dx);
    GRADCHECK("layernorm dweight", loss, gamma, dgamma);
    GRADCHECK("layernorm dbias", loss, beta, dbeta);
}

void TestGradcheck::linear()
{
    Tensor x = randomTensor({4, 5}, m_rng), wt = randomTensor({3, 5}, m_rng), b = randomTensor({3}, m_rng);
    Tensor w = randomTensor({4, 3}, m_rng);
    auto loss = [&] {
        Tensor out({4, 3});
        ops::linear_forward(out, x, wt, b);
        return weighted(out, w);
    };
    Tensor dx({4, 5}), dwt({3, 5}), db({3});
    ops::linear_backward(dx, dwt, &db, w, x, wt);
    GRADCHECK("linear dinp", loss, x, dx);
    GRADCHECK("linear dweight", loss, wt, dwt);
    GRADCHECK("linear dbias", loss, b, db);
}

void TestGradcheck::logits()
{
    Tensor x = randomTensor({4, 5}, m_rng), wte = randomTensor({7, 5}, m_rng), w = randomTensor({4, 7}, m_rng);
    auto loss = [&] {
        Tensor out({4, 7});
        ops::logits_forward(out, x, wte);
        return weighted(out, w);
    };
    Tensor dx({4, 5}), dwte({7, 5});
    ops::logits_backward(dx, dwte, w, x, wte);
    GRADCHECK("logits dinp", loss, x, dx);
    GRADCHECK("logits dwte", loss, wte, dwte);
}

void TestGradcheck::splitAndMergeHeads()
{
    const int H = 2, T = 3, d = 4;
    Tensor qkv = randomTensor({T, 3 * H * d}, m_rng);
    Tensor wq = randomTensor({H, T, d}, m_rng), wk = randomTensor({H, T, d}, m_rng),
           wv = randomTensor({H, T, d}, m_rng);
    auto splitLoss = [&] {
        Tensor q({H, T, d}), k({H, T, d}), v({H, T, d});
        ops::split_heads_forward(q, k, v, qkv, H);
        return weighted(q, wq) + weighted(k, wk) + weighted(v, wv);
    };
    Tensor dqkv({T, 3 * H * d});
    ops::split_heads_backward(dqkv, wq, wk, wv);
    GRADCHECK("split heads dqkv", splitLoss, qkv, dqkv);

    Tensor ctx = randomTensor({H, T, d}, m_rng), w = randomTensor({T, H * d}, m_rng);
    auto mergeLoss = [&] {
        Tensor out({T, H * d});
        ops::merge_heads_forward(out, ctx);
        return weighted(out, w);
    };
    Tensor dctx({H, T, d});
    ops::merge_heads_backward(dctx, w);
    GRADCHECK("merge heads dctx", mergeLoss, ctx, dctx);
}

void TestGradcheck::attentionScores()
{
    const float scale = 0.5f; // 1/√d for d = 4; a missing or doubled scale is off by a factor of 2
    Tensor q = randomTensor({2, 3, 4}, m_rng), k = randomTensor({2, 5, 4}, m_rng), w = randomTensor({2, 3, 5}, m_rng);
    auto loss = [&] {
        Tensor out({2, 3, 5});
        ops::attention_scores_forward(out, q, k, scale);
        return weighted(out, w);
    };
    Tensor dq({2, 3, 4}), dk({2, 5, 4});
    ops::attention_scores_backward(dq, dk, w, q, k, scale);
    GRADCHECK("scores dq", loss, q, dq);
    GRADCHECK("scores dk", loss, k, dk);
}

void TestGradcheck::attentionMask_data()
{
    QTest::addColumn<bool>("causal");
    QTest::addColumn<std::vector<int>>("padding");
    QTest::newRow("causal") << true << std::vector<int> {};
    QTest::newRow("causal, padding at 0 (a query with no key)") << true << std::vector<int> {0, 3};
    QTest::newRow("bidirectional, padding") << false << std::vector<int> {1, 4};
}

void TestGradcheck::attentionMask()
{
    QFETCH(bool, causal);
    QFETCH(std::vector<int>, padding);
    const int H = 2, T = 5;
    Tensor scores = randomTensor({H, T, T}, m_rng), w = randomTensor({H, T, T}, m_rng);
    Tensor masked({H, T, T});
    auto loss = [&] {
        ops::attention_mask_forward(masked, scores, causal, padding);
        return weighted(masked, w);
    };
    loss();
    Tensor dscores({H, T, T});
    ops::attention_mask_backward(dscores, w, causal, padding);
    GRADCHECK("mask dscores", loss, scores, dscores);
    for (int64_t i = 0; i < masked.numel(); ++i) // exact: a masked cell gets no gradient at all
        QCOMPARE(dscores.data()[i], std::isinf(masked.data()[i]) ? 0.0f : w.data()[i]);
}

void TestGradcheck::softmax()
{
    Tensor x = randomTensor({3, 6}, m_rng, 3.0f), w = randomTensor({3, 6}, m_rng);
    x.data()[2] = x.data()[5] = kNegInf; // a masked row, as the softmax sees it after the mask
    for (int j = 0; j < 6; ++j)
        x.data()[12 + j] = kNegInf; // a row with no allowed key at all
    auto loss = [&] {
        Tensor out({3, 6});
        ops::softmax_forward(out, x);
        return weighted(out, w);
    };
    Tensor out({3, 6}), dx({3, 6});
    ops::softmax_forward(out, x);
    ops::softmax_backward(dx, w, out);
    GRADCHECK("softmax dinp", loss, x, dx);
    for (int j = 0; j < 6; ++j)
        QCOMPARE(dx.data()[12 + j], 0.0f);
}

void TestGradcheck::attentionContext()
{
    Tensor probs = randomTensor({2, 3, 5}, m_rng), v = randomTensor({2, 5, 4}, m_rng),
           w = randomTensor({2, 3, 4}, m_rng);
    auto loss = [&] {
        Tensor out({2, 3, 4});
        ops::attention_context_forward(out, probs, v);
        return weighted(out, w);
    };
    Tensor dprobs({2, 3, 5}), dv({2, 5, 4});
    ops::attention_context_backward(dprobs, dv, w, probs, v);
    GRADCHECK("context dprobs", loss, probs, dprobs);
    GRADCHECK("context dv", loss, v, dv);
}

using ActivationForward = void (*)(Tensor &, const Tensor &);
using ActivationBackward = void (*)(Tensor &, const Tensor &, const Tensor &);
Q_DECLARE_METATYPE(ActivationForward)
Q_DECLARE_METATYPE(ActivationBackward)

void TestGradcheck::activations_data()
{
    QTest::addColumn<ActivationForward>("forward");
    QTest::addColumn<ActivationBackward>("backward");
    QTest::newRow("gelu tanh") << ActivationForward(ops::gelu_tanh_forward)
                               << ActivationBackward(ops::gelu_tanh_backward);
    QTest::newRow("gelu erf") << ActivationForward(ops::gelu_erf_forward) << ActivationBackward(ops::gelu_erf_backward);
    QTest::newRow("relu") << ActivationForward(ops::relu_forward) << ActivationBackward(ops::relu_backward);
}

void TestGradcheck::activations()
{
    QFETCH(ActivationForward, forward);
    QFETCH(ActivationBackward, backward);
    Tensor u = randomTensor({4, 12}, m_rng, 4.0f), w = randomTensor({4, 12}, m_rng);
    for (float &x : u.values()) // keep ReLU's kink out of the difference stencil (±2h)
        if (std::fabs(x) < 3 * kStep)
            x = std::copysign(3 * kStep, x);
    auto loss = [&] {
        Tensor out({4, 12});
        forward(out, u);
        return weighted(out, w);
    };
    Tensor du({4, 12});
    backward(du, w, u);
    GRADCHECK(QTest::currentDataTag(), loss, u, du);
}

void TestGradcheck::crossentropy()
{
    const std::vector<int> targets = {2, 0, 6, 3};
    Tensor logits = randomTensor({4, 7}, m_rng, 3.0f);
    auto loss = [&] {
        Tensor losses({4});
        return double(ops::crossentropy_forward(losses, logits, targets));
    };
    Tensor probs({4, 7}), dlogits({4, 7});
    ops::softmax_forward(probs, logits);
    ops::crossentropy_softmax_backward(dlogits, probs, targets);
    GRADCHECK("cross-entropy dlogits", loss, logits, dlogits);
}

void TestGradcheck::crossentropyIgnoresTargetsOfMinusOne()
{
    const std::vector<int> targets = {-1, 4, -1, 1};
    Tensor logits = randomTensor({4, 7}, m_rng, 3.0f);
    Tensor losses({4});
    auto loss = [&] { return double(ops::crossentropy_forward(losses, logits, targets)); };
    const double mean = loss();
    QCOMPARE(losses.data()[0], 0.0f);
    QVERIFY(std::fabs(mean - 0.5 * (double(losses.data()[1]) + double(losses.data()[3]))) < 1e-6); // mean of 2
    Tensor probs({4, 7}), dlogits({4, 7});
    ops::softmax_forward(probs, logits);
    ops::crossentropy_softmax_backward(dlogits, probs, targets);
    GRADCHECK("cross-entropy with ignored targets", loss, logits, dlogits);
    QCOMPARE(dlogits.matrix().row(2).squaredNorm(), 0.0f);
    try {
        ops::crossentropy_forward(losses, logits, {1, 2, 3});
        QFAIL("three targets for four positions were accepted");
    } catch (const Error &e) {
        QVERIFY2(QString(e.what()).contains("targets"), e.what());
    }
}

// The check is only worth its tolerance if plausible mistakes fail it.
void TestGradcheck::gradcheckCatchesWrongGradients()
{
    Tensor x = randomTensor({4, 8}, m_rng, 2.0f), gamma = randomTensor({8}, m_rng), beta = randomTensor({8}, m_rng);
    Tensor w = randomTensor({4, 8}, m_rng);
    auto loss = [&] {
        Tensor out({4, 8});
        ops::layernorm_forward(out, x, gamma, beta, 1e-5f);
        return weighted(out, w);
    };
    Tensor dx({4, 8}), dgamma({8}), dbeta({8});
    ops::layernorm_backward(dx, dgamma, dbeta, w, x, gamma, 1e-5f);
    Tensor scaled = dx; // 1 % off everywhere
    for (float &v : scaled.values())
        v *= 1.01f;
    QVERIFY(!verdict("scaled", gradcheck(loss, x, scaled), kTolerance).isEmpty());
    Tensor noMeanTerm = dx; // dropping the mean's term of dx = rstd (g − mean(g) − x̂ mean(g x̂)) shifts each row
    for (int t = 0; t < 4; ++t) {
        const float shift = (w.matrix().row(t).array() * ConstRowVectorMap(gamma.data(), 8).array()).mean();
        noMeanTerm.matrix().row(t).array() += shift * 0.1f; // even a tenth of it
    }
    QVERIFY(!verdict("no mean term", gradcheck(loss, x, noMeanTerm), kTolerance).isEmpty());

    Tensor a = randomTensor({4, 4}, m_rng), wt = randomTensor({4, 4}, m_rng), b = randomTensor({4}, m_rng);
    Tensor w2 = randomTensor({4, 4}, m_rng);
    auto linearLoss = [&] {
        Tensor out({4, 4});
        ops::linear_forward(out, a, wt, b);
        return weighted(out, w2);
    };
    Tensor transposed({4, 4}); // dinp = dout Wᵀ instead of dout W
    transposed.matrix() = w2.matrix() * wt.matrix().transpose();
    QVERIFY(!verdict("transposed", gradcheck(linearLoss, a, transposed), kTolerance).isEmpty());
}

void TestGradcheck::cleanupTestCase()
{
    qInfo("largest relative error of any passing check: %.3g (%s)", g_worst, qPrintable(g_worstName));
}

QTEST_GUILESS_MAIN(TestGradcheck)
#include "tst_gradcheck.moc"
