// Why √d: the variance of q·k grows as d for unit-variance components and the division brings it back to 1; on a
// real head, softmax with the division is the model's own attention row, and without it is softmax(√d · S) of the
// traced scores S = QKᵀ/√d.
#include "scaling/dotproductscaling.h"
#include "scaling/scaling.h"
#include "testbundle.h"
#include "trace/names.h"
#include "util/error.h"
#include "view/specrun.h"

#include <QTest>

#include <cmath>

using namespace atlas;
using namespace atlas::attention;

class TestDotProductScaling : public QObject
{
    Q_OBJECT

private slots:
    void randomVarianceGrowsAsD()
    {
        const auto points = randomDotProductVariance({1, 4, 16, 64, 256}, 4000, 7);
        QCOMPARE(points.size(), size_t(5));
        for (const DotProductVariance &p : points) {
            // 4000 samples: the relative standard error of a variance is about √(2/n)·… ≈ 3–5 %.
            QVERIFY2(std::abs(p.variance / p.dim - 1.0) < 0.15, qPrintable(QString::number(p.variance)));
            QVERIFY2(std::abs(p.scaledVariance - 1.0) < 0.15, qPrintable(QString::number(p.scaledVariance)));
        }
        QVERIFY(points.back().variance > 50 * points.front().variance);
    }

    void headRowsMatchTheTrace()
    {
        ViewSpec spec;
        spec.model = "reverse";
        spec.text = "abcdefgh>hgfedcba";
        const SpecRun run = runSpec(spec);
        const int layer = 0, head = 3, query = 13;
        const Tensor &q = run.trace->find(names::layerTensor(layer, "attn.q"))->tensor;
        const Tensor &k = run.trace->find(names::layerTensor(layer, "attn.k"))->tensor;
        const Tensor &scores = run.trace->find(names::layerTensor(layer, "attn.scores"))->tensor;
        const Tensor &probs = run.trace->find(names::layerTensor(layer, "attn.probs"))->tensor;
        const HeadScaling h = headScaling(q.slice(head), k.slice(head), true, {}, query);
        const int T = int(q.dim(1)), d = int(q.dim(2));
        QCOMPARE(h.dim, d);
        QCOMPARE(h.pairs, T * (T + 1) / 2);
        QCOMPARE(h.query, query);
        // With the division: the model's own row.
        for (int j = 0; j < T; ++j)
            QVERIFY2(
                std::abs(h.scaled[size_t(j)] - probs.slice(head)(query, j)) < 1e-5, qPrintable(QString::number(j)));
        // Without it: softmax(√d · S) of the traced scores, over the causal keys.
        double top = -1e300, sum = 0;
        for (int j = 0; j <= query; ++j)
            top = std::max(top, std::sqrt(double(d)) * scores.slice(head)(query, j));
        std::vector<double> expected(size_t(T), 0.0);
        for (int j = 0; j <= query; ++j)
            sum += expected[size_t(j)] = std::exp(std::sqrt(double(d)) * scores.slice(head)(query, j) - top);
        for (int j = 0; j < T; ++j)
            QVERIFY(std::abs(h.unscaled[size_t(j)] - expected[size_t(j)] / sum) < 1e-4);
        // Var(q·k/√d) is the variance of the traced scores over the allowed pairs.
        double mean = 0, m2 = 0;
        int n = 0;
        for (int i = 0; i < T; ++i)
            for (int j = 0; j <= i; ++j) {
                const double x = scores.slice(head)(i, j);
                ++n;
                const double delta = x - mean;
                mean += delta / n;
                m2 += delta * (x - mean);
            }
        QVERIFY(std::abs(h.scaledVariance - m2 / (n - 1)) < 1e-4 * std::max(1.0, h.scaledVariance));
        QVERIFY(std::abs(h.variance - d * h.scaledVariance) < 1e-3 * h.variance);
        QVERIFY(h.meanMaxUnscaled > h.meanMaxScaled); // without the division, softmax is peakier
    }

    void paddingAndBadQueries()
    {
        MatrixRM q = MatrixRM::Random(4, 2), k = MatrixRM::Random(4, 2);
        const ConstMatrixMap qm(q.data(), 4, 2), km(k.data(), 4, 2);
        const HeadScaling h = headScaling(qm, km, true, {0}, 0); // query 0's only key is padding
        QCOMPARE(h.scaled, std::vector<double>(4, 0.0));
        QCOMPARE(h.pairs, 3 + 2 + 1);
        QVERIFY_THROWS_EXCEPTION(Error, headScaling(qm, km, true, {}, 4));
        const HeadScaling last = headScaling(qm, km, false, {}, -1);
        QCOMPARE(last.query, 3);
        QCOMPARE(last.pairs, 16);
    }

    void analysisNamesAQueryOutsideTheInput()
    {
        ViewSpec spec;
        spec.model = "reverse";
        spec.text = "ab>ba";
        spec.view = "scaling";
        spec.query = 9;
        const SpecRun run = runSpec(spec);
        AnalysisContext c {run.trace, run.program, 5, 2, true, {}};
        const AnalysisRequest r = analysisRequest(spec, c);
        QVERIFY(QString::fromStdString(r.problem).contains("outside the input"));
        spec.query = -1;
        std::string problem;
        const auto result = runAnalysisNow(analysisRequest(spec, c), &problem);
        QVERIFY2(result != nullptr, problem.c_str());
        const auto *scaling = dynamic_cast<const ScalingAnalysis *>(result.get());
        QVERIFY(scaling != nullptr);
        QCOMPARE(scaling->measured.query, 4);
        QVERIFY(std::any_of(scaling->random.begin(), scaling->random.end(),
            [&](const DotProductVariance &p) { return p.dim == scaling->measured.dim; }));
    }
};

QTEST_MAIN(TestDotProductScaling)
#include "tst_dotproductscaling.moc"
