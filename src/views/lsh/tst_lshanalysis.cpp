// The LSH analysis (attention/lshanalysis.h, through the view analysis the session runs): buckets from the trace,
// the (bucket, position) order, the sorted matrix's allowed cells against the kernel's own mask, full attention
// and the pairs LSH missed, the in-plane sectors. No widget: the LSH view only draws this.
#include "engine/engine.h"
#include "lsh/lsh.h"
#include "testbundle.h"

#include <QTest>

#include <cmath>

using namespace atlas;

class TestLshAnalysis : public QObject
{
    Q_OBJECT

    std::shared_ptr<const Model> m_model = std::make_shared<Model>(Model::load(ATLAS_TEST_DATA "/gpt2_tiny"));
    const std::vector<int> m_tokens = {3, 17, 42, 8, 0, 25, 49, 11, 5, 30, 12, 44, 7, 21, 36, 2};

    struct Run
    {
        std::shared_ptr<const Trace> trace;
        std::shared_ptr<const Program> program;
    };

    Run run(std::vector<attention::AttentionKernelSpec> kernels)
    {
        Engine e(m_model, {m_tokens, {}, std::move(kernels)});
        e.runToEnd();
        return {std::make_shared<const Trace>(e.trace()), std::make_shared<const Program>(e.program())};
    }

    static attention::AttentionKernelSpec lsh(int rounds)
    {
        return attention::parseAttentionKernelSpec("lsh", {"rounds=" + std::to_string(rounds), "buckets=4", "chunk=4"});
    }

    AnalysisRequest request(const Run &r, int layer, int head)
    {
        ViewSpec spec;
        spec.view = "lsh";
        spec.layer = layer;
        spec.head = head;
        return analysisRequest(spec, {r.trace, r.program, int(m_tokens.size()), 2, true, {}});
    }

    // The analysis of (layer, head), as the session computes it; fails the test on a problem.
    attention::LshHeadAnalysis analyze(const Run &r, int layer, int head)
    {
        std::string problem;
        const auto result = runAnalysisNow(request(r, layer, head), &problem);
        const auto *lsh = dynamic_cast<const LshAnalysis *>(result.get());
        if (lsh == nullptr)
            qFatal("no LSH analysis: %s", problem.c_str());
        return lsh->data;
    }

private slots:
    void bucketsAreTheTracesAndTheOrderIsSorted()
    {
        const Run r = run({lsh(2)});
        const attention::LshHeadAnalysis h = analyze(r, 1, 2);
        const Tensor &buckets = r.trace->tensor("layer.1.lsh.buckets");
        const int T = int(m_tokens.size());
        QCOMPARE(h.rounds, 2);
        QCOMPARE(h.chunk, 4); // from the program's kernel spec, not from formula text
        bool differ = false;
        for (int round = 0; round < 2; ++round) {
            for (int t = 0; t < T; ++t) {
                QCOMPARE(h.bucket[size_t(round)][size_t(t)], int(buckets.data()[(2 * 2 + round) * T + t]));
                differ = differ || h.bucket[size_t(round)][size_t(t)] != h.bucket[size_t(round)][0];
            }
            const std::vector<int> &order = h.order[size_t(round)];
            std::vector<bool> seen(size_t(T), false);
            for (int a = 0; a < T; ++a) {
                seen[size_t(order[size_t(a)])] = true;
                if (a > 0) {
                    const int prev = order[size_t(a - 1)], cur = order[size_t(a)];
                    const int bp = h.bucket[size_t(round)][size_t(prev)], bc = h.bucket[size_t(round)][size_t(cur)];
                    QVERIFY(bp < bc || (bp == bc && prev < cur));
                }
            }
            QVERIFY(std::all_of(seen.begin(), seen.end(), [](bool s) { return s; }));
        }
        QVERIFY(differ); // more than one bucket is used, so the sort is not trivial
    }

    void allowedCellsEqualTheKernelsMaskWithOneRound()
    {
        const Run r = run({lsh(1)});
        const Tensor &mask = r.trace->tensor("layer.0.attn.mask");
        const int T = int(m_tokens.size());
        for (int head = 0; head < 4; ++head) {
            const attention::LshHeadAnalysis h = analyze(r, 0, head);
            const std::vector<int> &order = h.order[0];
            int allowed = 0;
            for (int a = 0; a < T; ++a)
                for (int b = 0; b < T; ++b) {
                    const int i = order[size_t(a)], j = order[size_t(b)];
                    if (i == j) // the trace's mask holds an own key only where it was alone
                        continue;
                    const bool inMask = mask.data()[(head * T + i) * T + j] != 0.0f;
                    QCOMPARE(h.allowedSorted(0, a, b), inMask);
                    allowed += inMask;
                }
            QVERIFY(allowed > 0 && allowed < T * (T - 1) / 2); // a real, partial pattern
        }
    }

    // Full attention is the kernel with one bucket; row 5 by hand: s_5j = q_5 · q_j/|q_j| / √d over j ≤ 5, own key
    // left out (penalised by 1e5). Missed pairs lie outside LSH's mask.
    void fullAttentionByHandAndMissedPairsOutsideTheMask()
    {
        const Run r = run({lsh(1)});
        const Tensor &mask = r.trace->tensor("layer.1.attn.mask");
        const Tensor &q = r.trace->tensor("layer.1.attn.q");
        const int T = int(m_tokens.size()), d = int(q.dim(2));
        int total = 0;
        for (int head = 0; head < 4; ++head) {
            const attention::LshHeadAnalysis h = analyze(r, 1, head);
            QCOMPARE(int(h.full.size()), T * T);
            const auto qh = q.slice(head);
            double sum = 0;
            for (int j = 0; j < 5; ++j)
                sum += std::exp(double(qh.row(5).dot(qh.row(j).normalized())) / std::sqrt(double(d)));
            const double w0 = std::exp(double(qh.row(5).dot(qh.row(0).normalized())) / std::sqrt(double(d))) / sum;
            QVERIFY(std::abs(h.full[size_t(5 * T)] - w0) < 1e-5);
            size_t expected = 0;
            double outside = 0;
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < T; ++j)
                    if (mask.data()[(head * T + i) * T + j] == 0.0f) {
                        expected += h.full[size_t(i * T + j)] >= 0.1;
                        outside += h.full[size_t(i * T + j)];
                    }
            QCOMPARE(h.missed.size(), expected);
            QVERIFY(std::abs(h.missedFraction - outside / T) < 1e-9);
            for (const attention::LshMissedPair &m : h.missed) {
                QCOMPARE(mask.data()[(head * T + m.query) * T + m.key], 0.0f);
                QVERIFY(m.weight >= 0.1);
            }
            total += int(expected);
        }
        QVERIFY(total > 0); // the check above is not vacuous
    }

    // The sectors are the kernel's hash of in-plane directions: a key lying in the plane (here: the plane's own
    // axes, d = 2 keys) falls in its own sector exactly.
    void keysInThePlaneFallInTheirOwnSector()
    {
        const int64_t T = 12, d = 2;
        Tensor q({T, d});
        for (int64_t t = 0; t < T; ++t) {
            const double a = 2 * M_PI * (double(t) + 0.37) / double(T);
            q.matrix()(t, 0) = float(std::cos(a));
            q.matrix()(t, 1) = float(std::sin(a));
        }
        const attention::LshParams params {3, 6, 4, 5};
        attention::AttentionOptions options {false, {}, true};
        const ConstMatrixMap qm = std::as_const(q).matrix();
        const attention::AttentionResult r = attention::lsh_attention_forward(qm, qm, qm, params, options);
        const attention::LshHeadAnalysis h = attention::analyzeLshHead({qm, r.extras.at("buckets").data(),
            r.extras.at("rotations").data(), r.weights.data(), r.mask.data(), params, false, {}});
        QVERIFY(h.explained > 0.999);
        for (int round = 0; round < 3; ++round)
            for (int64_t t = 0; t < T; ++t)
                QVERIFY2(
                    h.inOwnSector[size_t(round)][size_t(t)], qPrintable(QString("round %1 key %2").arg(round).arg(t)));
    }

    void aLayerWithoutLshIsAProblemNotAResult()
    {
        const Run r = run({lsh(2), attention::parseAttentionKernelSpec("full", {})});
        QCOMPARE(request(r, 1, 0).problem, std::string("This layer runs full attention: choose Attention ▸ lsh"));
        QVERIFY(request(r, 0, 0).problem.empty());
        QVERIFY(request(r, 0, 9).problem.find("no head 9") != std::string::npos);
        QVERIFY(request(r, 5, 0).problem.find("does not exist") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestLshAnalysis)
#include "tst_lshanalysis.moc"
