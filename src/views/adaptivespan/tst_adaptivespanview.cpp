// The Span view (src/views/adaptivespan): each head's learned span, and a model without spans or a run not yet there
// named.
#include "adaptivespan/adaptivespan.h"
#include "adaptivespan/adaptivespanview.h"
#include "testbundle.h"
#include "views/heatmapplot.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>

using namespace atlas;

class TestAdaptiveSpanView : public QObject
{
    Q_OBJECT

private slots:
    // Adaptive span: a bar per head with the model's spans, the caption's numbers the analysis's, a click on a bar
    // chooses that head; a model without spans is refused by name.
    void adaptiveSpanDrawsEveryHeadsSpan()
    {
        ViewSpec spec;
        spec.view = "adaptive-span";
        spec.model = "copy-span";
        spec.text = "qzkxwabmeq|qzkxwabmeq";
        AdaptiveSpanView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<AdaptiveSpanAnalysis>();
        QVERIFY(a);
        const AdaptiveSpans spans = a->spans;
        QCOMPARE(int(spans.heads.size()), 2);
        for (int layer = 0; layer < 2; ++layer)
            for (int h = 0; h < 4; ++h)
                QCOMPARE(float(spans.heads[size_t(layer)][size_t(h)].span),
                    view.input().model->attentionSpans(layer)[size_t(h)]);
        QVERIFY2(view.caption().contains(formatNumber(spans.meanSpan(), 3) + " tokens"), qPrintable(view.caption()));
        QVERIFY2(view.caption().contains(formatPercent(spans.reachShare())), qPrintable(view.caption()));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        QSignalSpy edited(&view, &View::specEdited);
        QCPAxis *x = view.plot()->axisRect(0)->axis(QCPAxis::atBottom);
        QCPAxis *y = view.plot()->axisRect(0)->axis(QCPAxis::atLeft);
        const QPoint bar(int(x->coordToPixel(5.0)), int(y->coordToPixel(1.0))); // layer 1, head 0
        QTest::mouseClick(view.plot(), Qt::LeftButton, {}, bar);
        QCOMPARE(edited.count(), 1);
        const ViewSpec chosen = edited.at(0).at(0).value<ViewSpec>();
        QCOMPARE(chosen.layer, 1);
        QCOMPARE(chosen.head, 0);

        spec.op = "layer.1.ln_1"; // stepped into layer 1: its weights are not computed yet
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("step to softmax within the span in layer 1"), qPrintable(view.message()));

        spec.op.clear();
        spec.model = "reverse";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("no adaptive span") && view.message().contains("copy-span"),
            qPrintable(view.message()));
    }
};

QTEST_MAIN(TestAdaptiveSpanView)
#include "tst_adaptivespanview.moc"
