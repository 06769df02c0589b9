// The RNN vs attention view (src/views/recurrence): three panels drawn from its analysis with nothing clipped, the
// caption's numbers the analysis's, the controls editing rnn_radius and query, a hover's tooltip the token's numbers,
// and an encoder–decoder refused with the reason.
#include "recurrence/recurrence.h"
#include "recurrence/recurrenceview.h"
#include "testbundle.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QToolTip>

using namespace atlas;

class TestRecurrenceView : public QObject
{
    Q_OBJECT

private slots:
    void drawsTheStepsTheReachAndTheHead()
    {
        ViewSpec spec;
        spec.view = "recurrence";
        spec.model = "austen-mlm";
        spec.text = "It is a truth universally acknowledged, that a single man";
        spec.layer = 1;
        spec.head = 1;
        spec.query = 40;
        RecurrenceView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<RecurrenceAnalysis>();
        QVERIFY(a);
        const RecurrenceComparison &c = a->comparison;
        const int T = int(view.input().tokens.size());
        QCOMPARE(c.rnn.query, 40);
        QCOMPARE(c.head, 1);
        const double fall = c.rnn.log10Reach[40] - c.rnn.log10Reach[0];
        const int k = c.strongestKey;
        QVERIFY2(k < 40, qPrintable(QString::number(k))); // head 1 of layer 1 looks back from row 40
        QVERIFY2(view.caption().contains(QString("on token %1 ").arg(k)), qPrintable(view.caption()));
        QVERIFY2(view.caption().contains(formatNumber(c.rnn.log10Reach[k] - c.rnn.log10Reach[40], 3)),
            qPrintable(view.caption()));
        for (const QString &number : {QString::number(T), QString::number(c.rnn.hidden), formatNumber(fall, 3),
                 formatPercent(c.attention[c.strongestKey]), formatNumber(c.rnnWork, 3),
                 formatNumber(c.attentionWork, 3), QString::fromStdString(c.input)})
            QVERIFY2(view.caption().contains(number), qPrintable(number + " in " + view.caption()));
        QVERIFY(fall > 0); // a trained model's vectors, ρ = 0.9: the first token reaches the last state least
        QCOMPARE(view.plot()->axisRectCount(), 3);
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        // Hovering token 3 in the reach panel gives its steps, its reach and the head's weight.
        QCPAxisRect *reach = view.plot()->axisRect(1);
        const QPoint at(int(reach->axis(QCPAxis::atBottom)->coordToPixel(3.0)), reach->center().y());
        QTest::mouseMove(view.plot(), at);
        QTRY_VERIFY(QToolTip::isVisible());
        const QString tip = QToolTip::text();
        QVERIFY2(tip.contains("Token 3"), qPrintable(tip));
        for (const QString &number : {QString::number(40 - 3) + " recurrent steps",
                 formatNumber(c.rnn.log10Reach[3], 3), formatPercent(c.attention[3])})
            QVERIFY2(tip.contains(number), qPrintable(number + " in " + tip));

        // The controls edit the spec's keys.
        QSignalSpy edited(&view, &View::specEdited);
        auto *radius = view.findChild<QDoubleSpinBox *>();
        QVERIFY(radius);
        QCOMPARE(radius->value(), 0.9);
        radius->setValue(1.2);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().get(views::recurrence::kRnnRadius), 1.2);
        auto *query = view.findChild<QSpinBox *>();
        QVERIFY(query);
        QCOMPARE(query->maximum(), T - 1);
        query->setValue(4);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().query, 4);

        spec.model = "seq2seq-sort";
        spec.text = "dcba";
        spec.decoderText = "ab";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("one stack"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestRecurrenceView)
#include "tst_recurrenceview.moc"
