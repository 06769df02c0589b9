// The LayerDrop view (src/views/layerdrop): a curve per model and rule, the caption's numbers the sweep's; a model
// without a task is refused.
#include "layerdrop/layerdrop.h"
#include "layerdrop/layerdropview.h"
#include "sanitizertesting.h"
#include "testbundle.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QSignalSpy>
#include <QTest>

using namespace atlas;

class TestLayerDropView : public QObject
{
    Q_OBJECT

private slots:
    // LayerDrop: one curve per model and rule, the caption's numbers the sweep's; a model without a task is refused.
    void layerDropDrawsBothModelsPruned()
    {
        ViewSpec spec;
        spec.view = "layerdrop";
        spec.model = "austen-layerdrop";
        spec.baselineModel = "austen-6";
        LayerDropView view;
        view.resize(1280, 720);
        view.setSpec(spec);
        // Under the sanitizers the sweeps run on the least work: what is drawn is checked there, the numbers here.
        view.setInput(testing::forSpec(spec, kAnalysesOnLeastWork));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<LayerDropAnalysis>();
        QVERIFY(a && a->sweeps.size() == 2);
        QCOMPARE(view.plot()->graphCount(), 4);
        for (const DepthSweep &s : a->sweeps) {
            QCOMPARE(s.layers, 6);
            const PrunedDepth &half = s.everyOther[2];
            QCOMPARE(half.dropped, (std::vector<int> {0, 2, 4}));
            QVERIFY2(view.caption().contains(formatPercent(half.score.tokenAccuracy)), qPrintable(view.caption()));
        }
        if (!kAnalysesOnLeastWork) // austen-layerdrop keeps its text with half its layers dropped, austen-6 does not
            QVERIFY(
                a->sweeps[0].everyOther[2].score.tokenAccuracy > 3 * a->sweeps[1].everyOther[2].score.tokenAccuracy);
        QVERIFY(view.title().contains("austen-layerdrop against austen-6"));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        spec.model = "reverse-rev";
        spec.baselineModel.clear();
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("reversible blocks"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestLayerDropView)
#include "tst_layerdropview.moc"
