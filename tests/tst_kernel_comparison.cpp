// The kernel comparison: every kernel on one head against full attention (context errors and the KL of rows).
#include "attention/gaussianstream.h"
#include "attention/kernelcomparison.h"
#include "testbundle.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace atlas;
using namespace atlas::attention;

class TestKernelComparison : public QObject
{
    Q_OBJECT

    static constexpr int64_t T = 16, d = 8;
    const MatrixRM m_q = GaussianStream(7, 0).matrix(T, d);
    const MatrixRM m_k = GaussianStream(7, 1).matrix(T, d);
    const MatrixRM m_v = GaussianStream(7, 2).matrix(T, d);

    std::vector<KernelComparisonEntry> compare(std::vector<AttentionKernelSpec> kernels, bool causal = true)
    {
        return compareKernels(ConstMatrixMap(m_q.data(), T, d), ConstMatrixMap(m_k.data(), T, d),
            ConstMatrixMap(m_v.data(), T, d), causal, {}, std::move(kernels));
    }

private slots:
    void fullAgainstFullIsExact()
    {
        const auto entries = compare({parseAttentionKernelSpec("full", {}), parseAttentionKernelSpec("full", {})});
        QCOMPARE(entries.size(), size_t(2));
        for (const auto &e : entries) {
            QVERIFY(!e.skipped);
            QCOMPARE(e.maxAbsError, 0.0);
            QCOMPARE(e.meanAbsError, 0.0);
            QCOMPARE(e.meanKl, 0.0);
            QCOMPARE(e.weights.shape(), (Shape {T, T}));
        }
    }

    void windowAsWideAsTheSequenceMatchesFull()
    {
        const auto entries = compare({parseAttentionKernelSpec("longformer", {"window=16"})});
        QCOMPARE(entries.size(), size_t(2)); // full is put first
        QCOMPARE(entries[0].spec.kind, std::string("full"));
        QVERIFY2(entries[1].maxAbsError < 1e-5, qPrintable(QString::number(entries[1].maxAbsError)));
        QVERIFY2(entries[1].meanKl < 1e-6, qPrintable(QString::number(entries[1].meanKl)));
        QCOMPARE(entries[1].meanDroppedWeight, 0.0);
    }

    void narrowWindowLosesWeight()
    {
        const auto entries = compare({parseAttentionKernelSpec("longformer", {"window=1"})});
        QVERIFY(entries[1].maxAbsError > 1e-3);
        QVERIFY(entries[1].meanAbsError > 0 && entries[1].meanAbsError <= entries[1].maxAbsError);
        QVERIFY(entries[1].meanKl > 0.1);
        // The dropped share is full attention's weight outside the window, computed here from the weights.
        const Tensor &full = entries[0].weights, &mask = entries[1].mask;
        double dropped = 0;
        for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < T; ++j)
                dropped += mask.data()[i * T + j] == 0.0f ? full.data()[i * T + j] : 0.0;
        QVERIFY(std::abs(entries[1].meanDroppedWeight - dropped / double(T)) < 1e-9);
        QVERIFY(entries[1].meanDroppedWeight > 0.05 && entries[1].meanDroppedWeight < 1.0);
    }

    void klOfHandMadeRows()
    {
        // p = (0.5, 0.5, 0), q = (1, 0, 0): q̃ = (1, ε, 0)/(1+ε), KL = 0.5 ln(0.5/q̃0) + 0.5 ln(0.5/q̃1).
        const float p[] = {0.5f, 0.5f, 0.0f}, q[] = {1.0f, 0.0f, 0.0f};
        const double e = kKlEpsilon, z = 1 + e;
        const double expected = 0.5 * std::log(0.5 / (1 / z)) + 0.5 * std::log(0.5 / (e / z));
        QVERIFY(std::abs(klDivergenceRow(p, q, 3) - expected) < 1e-9);
        QVERIFY(std::abs(klDivergenceRow(p, q, 3) - 9.6685) < 1e-3); // ≈ 0.5 ln(0.25 / 1e-9)
        // Rows with the same support: the plain KL, ε is negligible.
        const float a[] = {0.25f, 0.75f}, b[] = {0.5f, 0.5f};
        const double plain = 0.25 * std::log(0.5) + 0.75 * std::log(1.5);
        QVERIFY(std::abs(klDivergenceRow(a, b, 2) - plain) < 1e-7);
        const float zero[] = {0.0f, 0.0f};
        QVERIFY(std::isnan(klDivergenceRow(zero, b, 2)));
    }

    void defaultsRunEveryKindAndSkipCausalLinformer()
    {
        const auto entries = compare({});
        QCOMPARE(entries.size(), attentionKernelKinds().size());
        for (const auto &e : entries) {
            if (e.spec.kind == "linformer") {
                QVERIFY(e.skipped);
                QVERIFY(e.reason.find("causal") != std::string::npos);
                continue;
            }
            QVERIFY2(!e.skipped, e.reason.c_str());
            QVERIFY(std::isfinite(e.maxAbsError) && std::isfinite(e.meanKl));
        }
        const auto open = compare({}, false);
        const auto linformer
            = std::find_if(open.begin(), open.end(), [](const auto &e) { return e.spec.kind == "linformer"; });
        QVERIFY(linformer != open.end() && !linformer->skipped);
        QCOMPARE(linformer->spec.params.at("k"), std::string("8")); // max(1, T/2)
    }
};

QTEST_GUILESS_MAIN(TestKernelComparison)
#include "tst_kernel_comparison.moc"
