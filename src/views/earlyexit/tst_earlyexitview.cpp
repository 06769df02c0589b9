// The Early exit view (src/views/earlyexit): the caption's numbers are the rule's, the controls edit the spec, and a
// run not finished says what to step past.
#include "earlyexit/earlyexit.h"
#include "earlyexit/earlyexitview.h"
#include "testbundle.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QTest>

using namespace atlas;

class TestEarlyExitView : public QObject
{
    Q_OBJECT

private slots:
    void earlyExitDrawsTheChosenRule()
    {
        ViewSpec spec;
        spec.view = "early-exit";
        spec.model = "austen";
        spec.text = "It is a truth universally acknowledged";
        spec.set(views::earlyexit::kExitThreshold, 0.5);
        EarlyExitView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<EarlyExitAnalysis>();
        QVERIFY(a);
        const EarlyExit exit = a->exit; // the input is replaced below
        const EarlyExitPoint half = exit.measure(ExitRule::Confidence, 0.5);
        QVERIFY2(
            view.caption().contains(formatNumber(half.meanLayers, 3) + " of 4 blocks"), qPrintable(view.caption()));
        QVERIFY2(view.caption().contains(formatPercent(half.accuracy)), qPrintable(view.caption()));
        QVERIFY(view.title().contains("\u03B8 = 0.50"));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        QSignalSpy edited(&view, &View::specEdited);
        auto *rule = view.findChild<QComboBox *>();
        QVERIFY(rule);
        rule->setCurrentIndex(1);
        emit rule->activated(1);
        QCOMPARE(edited.count(), 1);
        spec = edited.at(0).at(0).value<ViewSpec>();
        QCOMPARE(QString::fromStdString(spec.get(views::earlyexit::kExitRule)), QString("patience"));
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        const EarlyExitPoint two = exit.measure(ExitRule::Patience, 2);
        QVERIFY(view.title().contains("patience (PABEE) \u00B7 t = 2"));
        QVERIFY2(view.caption().contains(formatNumber(two.meanLayers, 3) + " of 4 blocks"), qPrintable(view.caption()));

        spec.op = "layer.1.out";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("run to the end"), qPrintable(view.message()));
    }
};

QTEST_MAIN(TestEarlyExitView)
#include "tst_earlyexitview.moc"
