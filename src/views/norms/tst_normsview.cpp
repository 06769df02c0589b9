// The LayerNorm against BatchNorm view (src/views/norms): its caption's numbers are the analysis's, a hovered cell
// gives both values, nothing is clipped, and an encoder-decoder is refused with the reason.
#include "norms/norms.h"
#include "norms/normsview.h"
#include "testbundle.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QTest>
#include <QToolTip>

using namespace atlas;

class TestNormsView : public QObject
{
    Q_OBJECT

private slots:
    void drawsBothNormsAndTheChange()
    {
        ViewSpec spec;
        spec.view = "norms";
        spec.model = "austen";
        spec.text = "It is a truth universally acknowledged";
        spec.layer = 1;
        NormsView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<NormsAnalysis>();
        QVERIFY(a);
        const NormComparison &n = a->comparison;
        QCOMPARE(n.layer, 1);
        QCOMPARE(n.tokens, int(view.input().tokens.size()));
        for (const QString &number : {QString::fromStdString(n.input), QString::fromStdString(n.output),
                 formatNumber(n.laterTokensChange.front(), 3), QString::number(n.width)})
            QVERIFY2(view.caption().contains(number), qPrintable(number + " in " + view.caption()));
        QCOMPARE(view.plot()->axisRectCount(), 3);
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        // Hovering token 3, feature 10 of the middle map shows both normalisations of that cell.
        QCPAxisRect *batch = view.plot()->axisRect(1);
        const QPoint cell(int(batch->axis(QCPAxis::atBottom)->coordToPixel(10.0)),
            int(batch->axis(QCPAxis::atLeft)->coordToPixel(3.0)));
        QTest::mouseMove(view.plot(), cell);
        QTRY_VERIFY(QToolTip::isVisible());
        const QString tip = QToolTip::text();
        QVERIFY2(tip.contains("Token 3") && tip.contains("feature 10"), qPrintable(tip));
        for (const QString &number : {formatNumber(n.tokenNormed(3, 10), 4), formatNumber(n.batchNormed(3, 10), 4)})
            QVERIFY2(tip.contains(number), qPrintable(number + " in " + tip));

        spec.model = "seq2seq-sort";
        spec.text = "dcba";
        spec.decoderText = "ab";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("one stack"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestNormsView)
#include "tst_normsview.moc"
