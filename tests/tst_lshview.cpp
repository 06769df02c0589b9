// The LSH view: buckets from the trace, the (bucket, position) order, the sorted matrix's allowed cells against
// the kernel's own mask, and the pairs full attention weighs that LSH missed.
#include "engine/engine.h"
#include "views/colormaps.h"
#include "views/lshview.h"
#include "views/specrunner.h"

#include <QTest>
#include <QWidget>

#include <cmath>

using namespace atlas;

class TestLshView : public QObject
{
    Q_OBJECT

    std::shared_ptr<const Model> m_model = std::make_shared<Model>(Model::load(ATLAS_TEST_DATA "/gpt2_tiny"));
    const std::vector<int> m_tokens = {3, 17, 42, 8, 0, 25, 49, 11, 5, 30, 12, 44, 7, 21, 36, 2};

    ViewInput run(std::vector<attention::AttentionKernelSpec> kernels)
    {
        Input input {m_tokens, {}, std::move(kernels)};
        Engine e(m_model, input);
        e.runToEnd();
        return makeViewInput(m_model, input, std::make_shared<Trace>(e.trace()));
    }

    static attention::AttentionKernelSpec lsh(int rounds)
    {
        return attention::parseAttentionKernelSpec("lsh", {"rounds=" + std::to_string(rounds), "buckets=4", "chunk=4"});
    }

    static void show(LshView &view, const ViewInput &input, int layer, int head)
    {
        ViewSpec spec;
        spec.view = "lsh";
        spec.layer = layer;
        spec.head = head;
        spec.attention = "lsh";
        spec.attentionParams = {"buckets=4", "chunk=4"};
        view.resize(1400, 900);
        view.setSpec(spec);
        view.setInput(input);
    }

private slots:
    void gridShowsTheTraceBucketsAndOrderIsSorted()
    {
        const ViewInput input = run({lsh(2)});
        LshView view;
        show(view, input, 1, 2);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const Tensor &buckets = input.trace->tensor("layer.1.lsh.buckets");
        const int T = int(m_tokens.size());
        QCOMPARE(view.rounds(), 2);
        QCOMPARE(view.data().chunk, 4);
        bool differ = false;
        for (int r = 0; r < 2; ++r) {
            for (int t = 0; t < T; ++t) {
                QCOMPARE(view.gridBucket(r, t), int(buckets.data()[(2 * 2 + r) * T + t]));
                differ = differ || view.gridBucket(r, t) != view.gridBucket(r, 0);
            }
            const std::vector<int> &order = view.sortedOrder(r);
            QCOMPARE(int(order.size()), T);
            std::vector<bool> seen(size_t(T), false);
            for (int a = 0; a < T; ++a) {
                seen[size_t(order[size_t(a)])] = true;
                if (a > 0) {
                    const int prev = order[size_t(a - 1)], cur = order[size_t(a)];
                    const int bp = view.gridBucket(r, prev), bc = view.gridBucket(r, cur);
                    QVERIFY(bp < bc || (bp == bc && prev < cur));
                }
            }
            QVERIFY(std::all_of(seen.begin(), seen.end(), [](bool s) { return s; }));
        }
        QVERIFY(differ); // more than one bucket is used, so the sort is not trivial
        QVERIFY(view.isAnimating());
        view.setCurrentRound(1);
        QCOMPARE(view.currentRound(), 1);
        QTest::mouseClick(&view, Qt::LeftButton);
        QVERIFY(!view.isAnimating());
        QCOMPARE(view.spec().view, std::string("lsh")); // pausing does not edit the spec
        QVERIFY(!view.grab().isNull());
    }

    void allowedCellsEqualTheMaskWithOneRound()
    {
        const ViewInput input = run({lsh(1)});
        const Tensor &mask = input.trace->tensor("layer.0.attn.mask");
        const int T = int(m_tokens.size());
        for (int head = 0; head < 4; ++head) {
            LshView view;
            show(view, input, 0, head);
            QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
            const std::vector<int> &order = view.sortedOrder(0);
            int allowed = 0;
            for (int a = 0; a < T; ++a)
                for (int b = 0; b < T; ++b) {
                    const int i = order[size_t(a)], j = order[size_t(b)];
                    if (i == j) // the trace's mask holds an own key only where it was alone
                        continue;
                    const bool inMask = mask.data()[(head * T + i) * T + j] != 0.0f;
                    QCOMPARE(view.data().allowedSorted(0, a, b), inMask);
                    allowed += inMask;
                }
            QVERIFY(allowed > 0 && allowed < T * (T - 1) / 2); // a real, partial pattern
        }
    }

    void missedPairsLieOutsideTheMask()
    {
        const ViewInput input = run({lsh(1)});
        const Tensor &mask = input.trace->tensor("layer.1.attn.mask");
        const Tensor &q = input.trace->tensor("layer.1.attn.q");
        const int T = int(m_tokens.size()), d = int(q.dim(2));
        int total = 0;
        for (int head = 0; head < 4; ++head) {
            LshView view;
            show(view, input, 1, head);
            const auto &full = view.data().full;
            QCOMPARE(int(full.size()), T * T);
            // Row 5 by hand: s_5j = q_5 · q_j/|q_j| / √d over j ≤ 5, own key left out (penalised by 1e5).
            const auto qh = q.slice(head);
            double sum = 0;
            for (int j = 0; j < 5; ++j)
                sum += std::exp(double(qh.row(5).dot(qh.row(j).normalized())) / std::sqrt(double(d)));
            const double w0 = std::exp(double(qh.row(5).dot(qh.row(0).normalized())) / std::sqrt(double(d))) / sum;
            QVERIFY(std::abs(full[size_t(5 * T)] - w0) < 1e-5);
            size_t expected = 0;
            double outside = 0;
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < T; ++j)
                    if (mask.data()[(head * T + i) * T + j] == 0.0f) {
                        expected += full[size_t(i * T + j)] >= 0.1;
                        outside += full[size_t(i * T + j)];
                    }
            QCOMPARE(view.missedPairs().size(), expected);
            QVERIFY(std::abs(view.missedFraction() - outside / T) < 1e-9);
            for (const LshMissedPair &m : view.missedPairs()) {
                QCOMPARE(mask.data()[(head * T + m.query) * T + m.key], 0.0f);
                QVERIFY(m.weight >= 0.1);
            }
            total += int(expected);
        }
        QVERIFY(total > 0); // the check above is not vacuous
    }

    // Beyond 1024 tokens the sorted matrix is drawn in blocks: 1500 tokens in 2 × 2 blocks, a block grey only when
    // the round allows none of its pairs.
    void longInputsDrawTheSortedMatrixInBlocks()
    {
        ViewSpec spec;
        spec.view = "lsh";
        spec.model = "tiny-bytes";
        for (int i = 0; i < 1500; ++i)
            spec.tokens.push_back('a' + (i * 7) % 26);
        spec.attention = "lsh";
        spec.attentionParams = {"rounds=1", "buckets=4", "chunk=16"};
        const SpecRun run = runSpec(spec);
        LshView view;
        view.resize(1400, 900);
        view.setSpec(spec);
        view.setInput(run.viewInput);
        const QImage image = view.sortedImage(0);
        QCOMPARE(image.size(), QSize(750, 750));
        const QRgb grey = ColorLut(spec.colormap).masked();
        QVERIFY(image.pixel(0, 0) != grey); // the first sorted query attends the first sorted key
        QCOMPARE(image.pixel(749, 0), grey); // the first query, the last keys: another chunk, and in the future
        QVERIFY(!view.grab().isNull());

        // In the window the same input is read on a worker thread, the view saying so meanwhile.
        QWidget window;
        auto *shown = new LshView(&window);
        window.resize(1400, 900);
        shown->resize(1400, 900);
        window.show();
        shown->setSpec(spec);
        shown->setInput(run.viewInput);
        QVERIFY(shown->building());
        QVERIFY(shown->message().startsWith("Reading the buckets"));
        QTRY_VERIFY_WITH_TIMEOUT(!shown->building() && shown->message().isEmpty(), 20000);
        QCOMPARE(shown->sortedImage(0), image);
        QCOMPARE(shown->rounds(), 1);
    }

    void fullAttentionLayerShowsTheMessage()
    {
        const ViewInput input = run({lsh(2), attention::parseAttentionKernelSpec("full", {})});
        LshView view;
        show(view, input, 1, 0);
        QCOMPARE(view.message(), QString("This layer runs full attention: choose Attention ▸ lsh"));
        show(view, input, 0, 0);
        QVERIFY(view.message().isEmpty());
    }
};

QTEST_MAIN(TestLshView)
#include "tst_lshview.moc"
