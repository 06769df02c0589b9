// The "Why √d" view (src/views/scaling) on real layouts.
#include "scaling/scalingview.h"
#include "testbundle.h"
#include "viewtesting.h"

#include <QTest>

using namespace atlas;

class TestScalingView : public QObject
{
    Q_OBJECT

private slots:
    // "The model" is the rule the model computes: softmax(q·k/√d) in GPT-2's layout, softmax(q·k) in GPT-Neo's, whose
    // local layer's window the comparison does not apply (the caption says so).
    void scalingViewNamesTheRuleTheModelUses()
    {
        for (const char *model : {"gpt2_tiny", "neo_tiny"}) {
            ViewSpec spec;
            spec.view = "scaling";
            spec.model = QString(ATLAS_TEST_DATA "/%1").arg(model).toStdString();
            spec.tokens = {3, 17, 42, 8, 0, 25};
            spec.layer = 1;
            ScalingView view;
            view.resize(900, 600);
            view.setSpec(spec);
            view.setInput(testing::forSpec(spec));
            view.show();
            QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
            const bool neo = QString(model) == "neo_tiny";
            QCOMPARE(view.caption().contains("does not divide its scores"), neo);
            QCOMPARE(view.caption().contains("sliding window of 3 positions is not applied"), neo);
        }
    }
};

QTEST_MAIN(TestScalingView)
#include "tst_scalingview.moc"
