// The approximation sweep: Linformer and Performer on one head for growing k / features, against softmax attention.
#include "attention/approximationsweep.h"
#include "attention/attentionkernel.h"
#include "attention/gaussianstream.h"
#include "attention/performerattention.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>

#include <cmath>

using namespace atlas;
using namespace atlas::attention;

class TestApproximationSweep : public QObject
{
    Q_OBJECT

    static constexpr int64_t T = 32, d = 8;
    const MatrixRM m_q = GaussianStream(11, 0).matrix(T, d);
    const MatrixRM m_k = GaussianStream(11, 1).matrix(T, d);
    const MatrixRM m_v = GaussianStream(11, 2).matrix(T, d);

    ApproximationSweep sweep(const ApproximationSweepOptions &o) const
    {
        return approximation_sweep(
            ConstMatrixMap(m_q.data(), T, d), ConstMatrixMap(m_k.data(), T, d), ConstMatrixMap(m_v.data(), T, d), o);
    }

    // softmax(q kᵀ/√d) with the causal mask, in double, straight from the definition. Returns (T,T).
    MatrixRM exactWeights(bool causal) const
    {
        Eigen::MatrixXd w = Eigen::MatrixXd::Zero(T, T);
        for (int64_t i = 0; i < T; ++i) {
            const int64_t n = causal ? i + 1 : T;
            double mx = -1e300, sum = 0;
            for (int64_t j = 0; j < n; ++j)
                mx = std::max(mx, double(m_q.row(i).dot(m_k.row(j))) / std::sqrt(double(d)));
            for (int64_t j = 0; j < n; ++j)
                sum += w(i, j) = std::exp(double(m_q.row(i).dot(m_k.row(j))) / std::sqrt(double(d)) - mx);
            w.row(i) /= sum;
        }
        return w.cast<float>();
    }

    // Performer's implied weights from the definition: φ(x) = exp(ω·x − |x|²/2)/√m with x = q/d^¼ (k likewise),
    // w_ij = φ(q_i)·φ(k_j) / Σ_j' φ(q_i)·φ(k_j'), in double and without the kernel's stabilising shifts.
    MatrixRM performerWeights(int m, uint64_t seed, bool causal) const
    {
        const Eigen::MatrixXd omega = performer_random_features(m, d, seed).cast<double>();
        const double scale = 1.0 / std::pow(double(d), 0.25);
        const auto phi = [&](const MatrixRM &x) {
            Eigen::MatrixXd out(T, m);
            for (int64_t t = 0; t < T; ++t) {
                const Eigen::VectorXd xs = x.row(t).cast<double>().transpose() * scale;
                for (int r = 0; r < m; ++r)
                    out(t, r) = std::exp(omega.row(r).dot(xs) - 0.5 * xs.squaredNorm()) / std::sqrt(double(m));
            }
            return out;
        };
        Eigen::MatrixXd w = phi(m_q) * phi(m_k).transpose();
        for (int64_t i = 0; i < T; ++i) {
            if (causal)
                w.row(i).tail(T - i - 1).setZero();
            w.row(i) /= w.row(i).sum();
        }
        return w.cast<float>();
    }

    static void expectError(const ApproximationSweepOptions &o, const QString &kernel, const QString &what)
    {
        const MatrixRM x = GaussianStream(1, 0).matrix(T, d);
        const ConstMatrixMap m(x.data(), T, d);
        try {
            approximation_sweep(m, m, m, o);
            QFAIL(qPrintable("no error for " + what));
        } catch (const Error &e) {
            const QString message = e.what();
            QVERIFY2(message.contains("'" + kernel + "'"), qPrintable(message));
            QVERIFY2(message.contains(what), qPrintable(message));
        }
    }

private slots:
    void linformerWithTheIdentityAtKEqualsTIsExact()
    {
        ApproximationSweepOptions o;
        o.kernel = "linformer";
        o.identity = true;
        o.values = {int(T)};
        o.seeds = 2;
        o.padding = {3, 30};
        const ApproximationSweep s = sweep(o);
        QCOMPARE(s.points.size(), size_t(1));
        const ApproximationPoint &p = s.points[0];
        QVERIFY2(p.maxAbsError.max < 1e-5, qPrintable(QString::number(p.maxAbsError.max)));
        QVERIFY2(p.rowL1.max < 1e-5, qPrintable(QString::number(p.rowL1.max)));
        QVERIFY2(p.kl.max < 1e-6, qPrintable(QString::number(p.kl.max)));
        QCOMPARE(p.weights.shape(), (Shape {T, T}));
        QCOMPARE(p.weights.data()[5 * T + 3], 0.0f); // padding gets no weight
    }

    void linformerErrorShrinksAsKGrows()
    {
        ApproximationSweepOptions o;
        o.kernel = "linformer";
        const ApproximationSweep s = sweep(o);
        QCOMPARE(s.points.size(), size_t(6)); // 1, 2, 4, 8, 16, 32
        QCOMPARE(s.points.front().value, 1);
        QCOMPARE(s.points.back().value, int(T));
        QVERIFY(s.hasWeightErrors && !s.causal && s.seeds == 5);
        for (size_t i = 1; i < s.points.size(); ++i) {
            const ApproximationPoint &a = s.points[i - 1], &b = s.points[i];
            QVERIFY2(b.rowL1.mean < a.rowL1.mean, qPrintable(QString("row L1 at k=%1").arg(b.value)));
            QVERIFY2(b.meanAbsError.mean < a.meanAbsError.mean, qPrintable(QString("|ΔC| at k=%1").arg(b.value)));
        }
        QVERIFY(s.points.back().meanAbsError.mean < s.points.front().meanAbsError.mean / 4);
        for (const ApproximationPoint &p : s.points) { // different seeds give different projections
            QVERIFY(p.rowL1.min <= p.rowL1.mean && p.rowL1.mean <= p.rowL1.max);
            QVERIFY(p.rowL1.min < p.rowL1.max);
        }
    }

    void performerErrorShrinksAsFeaturesGrow()
    {
        for (bool causal : {false, true}) {
            ApproximationSweepOptions o;
            o.kernel = "performer";
            o.causal = causal;
            o.values = {8, 64, 512};
            const ApproximationSweep s = sweep(o);
            QCOMPARE(s.points.size(), size_t(3));
            for (size_t i = 1; i < s.points.size(); ++i) {
                QVERIFY(s.points[i].meanAbsError.mean < s.points[i - 1].meanAbsError.mean);
                QVERIFY(s.points[i].rowL1.mean < s.points[i - 1].rowL1.mean);
                QVERIFY(s.points[i].kl.mean < s.points[i - 1].kl.mean);
            }
            // A Monte Carlo estimate of exp(q·k/√d) whose variance grows as exp(|q+k|²/√d): with N(0,1) inputs
            // it takes many features before the 1/√m decay shows; 64 times the features still halve the error.
            QVERIFY(s.points[2].rowL1.mean < s.points[0].rowL1.mean / 1.8);
        }
    }

    void defaultValues()
    {
        QCOMPARE(defaultSweepValues("linformer", 24), (std::vector<int> {1, 2, 4, 8, 16, 24}));
        QCOMPARE(defaultSweepValues("linformer", 1), (std::vector<int> {1}));
        QCOMPARE(defaultSweepValues("performer", 5), (std::vector<int> {8, 16, 32, 64, 128, 256, 512, 1024}));
        QCOMPARE(defaultSweepValues("performer", 4096), defaultSweepValues("performer", 5));
    }

    void weightsMatchADirectRecomputation()
    {
        for (bool causal : {false, true}) {
            ApproximationSweepOptions o;
            o.kernel = "performer";
            o.causal = causal;
            o.values = {16, 128};
            o.seeds = 1;
            const ApproximationSweep s = sweep(o);
            const MatrixRM exact = exactWeights(causal);
            QVERIFY((s.exactWeights.matrix() - exact).cwiseAbs().maxCoeff() < 1e-5);
            for (const ApproximationPoint &p : s.points) {
                const MatrixRM w = performerWeights(p.value, 0, causal);
                QVERIFY2((p.weights.matrix() - w).cwiseAbs().maxCoeff() < 1e-4,
                    qPrintable(QString("features %1").arg(p.value)));
                // The row L1 and the context errors of the recomputed weights; one seed: mean = min = max.
                const double l1 = (w - exact).cwiseAbs().rowwise().sum().cast<double>().mean();
                QVERIFY(std::abs(p.rowL1.mean - l1) < 1e-4 && p.rowL1.min == p.rowL1.max);
                const MatrixRM dc = (w - exact) * m_v;
                QVERIFY(std::abs(p.meanAbsError.mean - dc.cwiseAbs().cast<double>().mean()) < 1e-4);
                QVERIFY(std::abs(p.maxAbsError.mean - dc.cwiseAbs().maxCoeff()) < 1e-4);
                QVERIFY(p.rowL1.mean > 1e-3); // an approximation, not softmax itself
            }
        }
    }

    void valuesAreFinite()
    {
        for (const char *kernel : {"linformer", "performer"}) {
            ApproximationSweepOptions o;
            o.kernel = kernel;
            o.padding = {0, 7};
            o.seeds = 2;
            const ApproximationSweep s = sweep(o);
            QVERIFY(!s.points.empty());
            for (const ApproximationPoint &p : s.points) {
                for (const SweepStat &st : {p.maxAbsError, p.meanAbsError, p.rowL1, p.kl})
                    QVERIFY(std::isfinite(st.mean) && std::isfinite(st.min) && std::isfinite(st.max));
                QVERIFY(p.weights.matrix().allFinite());
                QCOMPARE(p.weights.data()[9 * T + 7], 0.0f);
            }
        }
    }

    void longInputsGiveContextErrorsOnly()
    {
        const int64_t n = kMaxDenseSweepTokens + 8;
        const MatrixRM x = GaussianStream(3, 0).matrix(n, 4);
        const ConstMatrixMap m(x.data(), n, 4);
        ApproximationSweepOptions o;
        o.kernel = "performer";
        o.values = {8};
        o.seeds = 1;
        const ApproximationSweep s = approximation_sweep(m, m, m, o);
        QVERIFY(!s.hasWeightErrors && s.exactWeights.empty() && s.points[0].weights.empty());
        // The same run by hand: performer (features 8, seed 0) against full attention.
        AttentionOptions options;
        const Tensor approx
            = attention_kernel_forward(parseAttentionKernelSpec("performer", {"features=8"}), m, m, m, options).context;
        const Tensor exact = attention_kernel_forward(parseAttentionKernelSpec("full", {}), m, m, m, options).context;
        const double maxError = (approx.matrix() - exact.matrix()).cwiseAbs().maxCoeff();
        QVERIFY(maxError > 0);
        QCOMPARE(s.points[0].maxAbsError.mean, maxError);
    }

    void cancelStopsTheSweep()
    {
        const std::atomic<bool> stop {true};
        ApproximationSweepOptions o;
        o.cancel = &stop;
        const ApproximationSweep s = sweep(o);
        QVERIFY(s.cancelled);
        QVERIFY(s.points.empty());
    }

    void badInputNamesTheKernel()
    {
        ApproximationSweepOptions o;
        o.kernel = "linformer";
        o.causal = true;
        expectError(o, "linformer", "causal");
        o.causal = false;
        o.values = {4, 0};
        expectError(o, "linformer", "'k' must be at least 1");
        o.kernel = "performer";
        o.values = {-2};
        expectError(o, "performer", "'features' must be at least 1");
        o.values = {8};
        o.seeds = 0;
        expectError(o, "performer", "seeds");
        o.seeds = 1;
        o.kernel = "lsh";
        expectError(o, "lsh", "linformer");
        o.kernel = "linformer";
        o.identity = true;
        o.values = {4};
        expectError(o, "linformer", "identity");
        o.identity = false;
        o.padding = {int(T)};
        expectError(o, "linformer", "padding");
    }
};

QTEST_GUILESS_MAIN(TestApproximationSweep)
#include "tst_approximation_sweep.moc"
