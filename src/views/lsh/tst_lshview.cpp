// The LSH view draws the session's LSH analysis (tst_lshanalysis checks its numbers): the grid and the order it
// shows, the animation, the sorted matrix drawn in blocks for long inputs (on a worker in a window), and the
// analysis's problems as messages.
#include "lsh/lshview.h"
#include "testbundle.h"
#include "views/colormaps.h"
#include "viewtesting.h"

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
        return testing::traced(m_model, {m_tokens, {}, std::move(kernels)});
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
        view.setInput(testing::analyzed(input, spec));
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
        const ViewInput input = testing::forSpec(spec);
        LshView view;
        view.resize(1400, 900);
        view.setSpec(spec);
        view.setInput(input);
        const QImage image = view.sortedImage(0);
        QCOMPARE(image.size(), QSize(750, 750));
        const QRgb grey = ColorLut(spec.colormap).masked();
        QVERIFY(image.pixel(0, 0) != grey); // the first sorted query attends the first sorted key
        QCOMPARE(image.pixel(749, 0), grey); // the first query, the last keys: another chunk, and in the future
        QVERIFY(!view.grab().isNull());

        // In the window the same matrix is drawn on a worker thread, the view saying so meanwhile.
        QWidget window;
        auto *shown = new LshView(&window);
        window.resize(1400, 900);
        shown->resize(1400, 900);
        window.show();
        shown->setSpec(spec);
        shown->setInput(input);
        QVERIFY(shown->building());
        QVERIFY(shown->message().startsWith("Drawing the sorted chunks"));
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
        // Without the session's analysis yet, the view says it is on its way.
        view.setInput(input);
        QVERIFY(view.message().startsWith("Reading the buckets"));
    }
};

QTEST_MAIN(TestLshView)
#include "tst_lshview.moc"
