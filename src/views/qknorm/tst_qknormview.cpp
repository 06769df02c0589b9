// The QK-norm view (src/views/qknorm): what it draws from its analysis, the head a click chooses, and what it says of
// a model without QK-norm and of one it cannot measure.
#include "qknorm/qknorm.h"
#include "qknorm/qknormview.h"
#include "testbundle.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QSignalSpy>
#include <QTest>

using namespace atlas;

class TestQkNormView : public QObject
{
    Q_OBJECT

private slots:
    // QK-norm: the caption's numbers are the analysis's for the chosen head, a click on the scores panel chooses a
    // head, a model without QK-norm says so, and one whose scores carry a position bias is refused.
    void qkNormDrawsLengthsAndBounds()
    {
        ViewSpec spec;
        spec.view = "qk-norm";
        spec.model = "reverse-qwen3";
        spec.text = "dsfacdd>ddcafsd";
        spec.layer = 1;
        spec.head = 2;
        QkNormView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<QkNormAnalysis>();
        QVERIFY(a);
        const QkNormHead &head = a->effect.heads[2];
        QVERIFY(head.weightBound > 0);
        for (const QString &number : {formatNumber(head.weightBound, 3), formatNumber(head.inputBound, 3),
                 formatNumber(head.highest, 3), formatNumber(head.queryLimit, 3)})
            QVERIFY2(view.caption().contains(number), qPrintable(number + " in " + view.caption()));
        QVERIFY2(view.caption().contains("Head 2"), qPrintable(view.caption()));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        QSignalSpy edited(&view, &View::specEdited);
        QCPAxisRect *scores = view.plot()->axisRect(1);
        const QPoint head0(int(scores->axis(QCPAxis::atBottom)->coordToPixel(0.0)),
            int(scores->axis(QCPAxis::atLeft)->coordToPixel(0.0)));
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, head0);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().head, 0);

        spec.model = "reverse-llama";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QVERIFY2(view.caption().contains("no QK-norm") && view.caption().contains("reverse-qwen3"),
            qPrintable(view.caption()));

        spec.model = "reverse-alibi";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("position bias"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestQkNormView)
#include "tst_qknormview.moc"
