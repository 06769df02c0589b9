// The Sparse FFN view (src/views/sparseffn): a dense feed-forward layer beside its one-neuron-per-block sparse twin.
#include "sparseffn/sparseffn.h"
#include "sparseffn/sparseffnview.h"
#include "testbundle.h"
#include "views/heatmapplot.h"
#include "viewtesting.h"

#include <QSignalSpy>
#include <QTest>

using namespace atlas;

class TestSparseFfnView : public QObject
{
    Q_OBJECT

private slots:
    void sparseFfnViewDrawsDenseAndSparse();
};

// The Sparse FFN view on tiny-bytes: the dense activations and the kept ones side by side, the error curves; the
// block box asking for another N; a Switch layer's message.
void TestSparseFfnView::sparseFfnViewDrawsDenseAndSparse()
{
    ViewSpec spec;
    spec.view = "sparse-ffn";
    spec.model = "tiny-bytes";
    spec.text = "Hello world";
    spec.layer = 1;
    SparseFfnView view;
    view.resize(1280, 720);
    view.setSpec(spec);
    view.setInput(testing::forSpec(spec));
    QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
    QVERIFY2(
        view.formula().startsWith("Layer 1's feed-forward layer keeps one neuron in 8"), qPrintable(view.formula()));
    QCOMPARE(view.densePlot()->matrixRows(), 11);
    QCOMPARE(view.densePlot()->matrixCols(), 256);
    QCOMPARE(view.sparsePlot()->matrixCols(), 256);
    QCOMPARE(view.errorPlot()->graphCount(), 3); // top-k, one per block, this view's point
    QSignalSpy edited(&view, &View::specEdited);
    view.blockBox()->setCurrentIndex(view.blockBox()->findData(32));
    emit view.blockBox()->activated(view.blockBox()->currentIndex());
    QCOMPARE(edited.count(), 1);
    QCOMPARE(edited.at(0).at(0).value<ViewSpec>().get(views::sparseffn::kBlockSize), 32);
    // Until the input brings the result of N = 32, the one of N = 8 is not drawn as if it were.
    spec.set(views::sparseffn::kBlockSize, 32);
    view.setSpec(spec);
    QVERIFY2(!view.message().isEmpty(), "the result of block_size 8 was drawn for 32");
    view.setInput(testing::forSpec(spec));
    QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
    QVERIFY2(view.formula().contains("one neuron in 32"), qPrintable(view.formula()));
    // While the session computes the next block size's result, the last picture stays as it was drawn.
    ViewInput running = view.input();
    running.analysis = {};
    running.analysis.pending = true;
    spec.set(views::sparseffn::kBlockSize, 8);
    running.analysis.settings = analysisSettings(spec);
    view.setInputAndSpec(running, spec);
    QVERIFY2(view.message().isEmpty() && view.formula().contains("one neuron in 32"), qPrintable(view.message()));

    spec.model = "austen-switch";
    spec.layer = 0;
    view.setSpec(spec);
    view.setInput(testing::forSpec(spec));
    QVERIFY2(view.message().contains("is a mixture of experts"), qPrintable(view.message()));
}

QTEST_MAIN(TestSparseFfnView)
#include "tst_sparseffnview.moc"
