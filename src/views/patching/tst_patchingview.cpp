// The Patching view (src/views/patching): activation patching traced through the layers, and a run over the budget
// offered to run anyway.
#include "patching/patching.h"
#include "patching/patchingview.h"
#include "testbundle.h"
#include "views/heatmapplot.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>

using namespace atlas;

class TestPatchingView : public QObject
{
    Q_OBJECT

private slots:
    // Patching copy's induction: the changed letter after the first "x" restores the answer when patched into the
    // stream entering block 0 at its own position, and entering block 1 at the last position, where layer 0 moved it.
    void patchingTracesTheLetterThroughTheLayers()
    {
        ViewSpec spec;
        spec.view = "patching";
        spec.model = "copy";
        spec.text = "qzkxwmbt|qzkx";
        spec.set(views::patching::kCorruptedText, "qzkxambt|qzkx");
        spec.target = "w";
        spec.set(views::patching::kContrast, "a");
        PatchingView view;
        view.resize(1200, 700);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.plot()->matrixRows(), 2);
        QCOMPARE(view.plot()->matrixCols(), 13);
        QCOMPARE(view.plot()->displayedValue(0, 4), 1.0);
        QVERIFY(view.plot()->displayedValue(1, 12) > 0.99);
        QVERIFY(std::abs(view.plot()->displayedValue(1, 4)) < 0.01);
        QVERIFY(view.plot()->title().contains("logit('w')"));
        QVERIFY(view.caption().contains("26 patched forward passes"));

        spec.set(views::patching::kPatch, "heads");
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QCOMPARE(view.plot()->matrixCols(), 4);
        QVERIFY(view.plot()->displayedValue(0, 3) > 0.99); // lesson 2's induction head

        QSignalSpy cancelled(&view, &View::analysisCancelled); // the window stops the session's sweep on it
        view.cancelButton()->click();
        QCOMPARE(cancelled.count(), 1);

        spec.set(views::patching::kCorruptedText, "qzkxambt|qz"); // two tokens short
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("as many tokens"), qPrintable(view.message()));
        spec.target.clear();
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("Target box"), qPrintable(view.message()));
    }

    // Patching over the work budget is refused with its estimate, and the message's "Run anyway" is a link that asks
    // the window to run it.
    void patchingOverTheBudgetOffersToRunAnyway()
    {
        ViewSpec spec;
        spec.view = "patching";
        spec.model = "copy";
        spec.text = "qzkxwmbt|qzkx";
        spec.set(views::patching::kCorruptedText, "qzkxambt|qzkx");
        spec.target = "w";
        const WorkBudget saved = WorkBudget::process();
        WorkBudget::process().flops = 1e3;
        PatchingView view;
        view.resize(1200, 700);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        WorkBudget::process() = saved;
        QVERIFY2(view.message().startsWith("Patching 13 tokens (26 forward passes, site residual) is about "),
            qPrintable(view.message()));
        QLabel *message = nullptr;
        for (QLabel *label : view.findChildren<QLabel *>())
            if (label->text().contains("href=\"run-anyway:\""))
                message = label;
        QVERIFY(message);
        QSignalSpy asked(&view, &View::runAnywayRequested);
        emit message->linkActivated("run-anyway:");
        QCOMPARE(asked.count(), 1);
    }
};

QTEST_MAIN(TestPatchingView)
#include "tst_patchingview.moc"
