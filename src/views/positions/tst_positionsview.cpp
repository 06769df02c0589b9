// The Positions view (src/views/positions) on the fixture models of tst_positions.
#include "positions/positions.h"
#include "positions/positionsview.h"
#include "testbundle.h"
#include "views/heatmapplot.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QTest>

using namespace atlas;

class TestPositionsView : public QObject
{
    Q_OBJECT

private slots:
    // The Positions view on the fixture models of tst_positions: each kind's matrices, with a causal model's
    // future keys in the masked style; no positions, a message saying what that means.
    void positionsViewDrawsEachKind()
    {
        for (const QString kind : {"alibi", "rope", "none"}) {
            ViewSpec spec;
            spec.view = "positions";
            spec.model = (QStringLiteral(ATLAS_TEST_DATA "/positions/") + kind).toStdString();
            spec.tokens = {3, 17, 22, 8, 0, 25};
            spec.layer = 1;
            spec.head = 2;
            PositionsView view;
            view.resize(1000, 700);
            view.setSpec(spec);
            view.setInput(testing::forSpec(spec));
            QVERIFY2(view.formula().startsWith(kind + " positions:"), qPrintable(view.formula()));
            if (kind == "none") {
                QVERIFY(view.message().contains("no positions"));
                continue;
            }
            QVERIFY(view.message().isEmpty());
            QCOMPARE(view.encodingPlot()->matrixRows(), 6);
            if (kind == "alibi") {
                QCOMPARE(view.encodingPlot()->matrixCols(), 6); // the score term of layer 1, head 2: query × key
                QVERIFY(view.similarityPlot()->isHidden());
                QCOMPARE(view.curvesPlot()->graphCount(), 3); // a bias line per head
                QVERIFY(view.rotationPlot()->isHidden());
                QVERIFY(view.encodingPlot()->pooled().hasNegInf); // causal: the keys after each query are masked
            } else {
                QCOMPARE(view.encodingPlot()->matrixCols(), 4); // d = 8: four pairs
                QCOMPARE(view.similarityPlot()->matrixCols(), 6);
                QCOMPARE(view.curvesPlot()->graphCount(), 1); // the wavelengths
                QVERIFY(!view.rotationPlot()->isHidden()); // four pairs on circles: a circle and four arrows each
                QCOMPARE(view.rotationPlot()->itemCount(), 4 * (1 + 4 + 1) + 1);
            }
        }
    }
};

QTEST_MAIN(TestPositionsView)
#include "tst_positionsview.moc"
