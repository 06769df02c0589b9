// The architecture diagram (views/architectureview.h): a box per op of the program, the stepper's outlined, a click
// asks for its op; a diagram wider than the view is scaled, or its layers folded, so that every box stays inside.
#include "views/architectureview.h"
#include "viewtesting.h"

#include <QSignalSpy>
#include <QtTest>

using namespace atlas;

class TestArchitectureView : public QObject
{
    Q_OBJECT

private slots:
    // The architecture diagram boxes every op of the program, outlines the stepper's, and a click asks for its op.
    void architectureBoxesEveryOpAndStepsOnAClick()
    {
        ViewSpec s;
        s.view = "architecture";
        s.model = "reverse";
        s.text = "abcd>dcb";
        s.op = "layer.0.attn.probs";
        ArchitectureView view;
        view.resize(1200, 800);
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        QVERIFY(view.message().isEmpty());
        const Program &program = *view.input().program;
        QCOMPARE(view.diagram().boxes.size(), program.ops.size());
        QCOMPARE(view.diagram().current, program.indexOf("layer.0.attn.probs"));
        QSignalSpy edited(&view, &View::specEdited);
        const int target = program.indexOf("layer.1.mlp.up");
        QTest::mouseClick(&view, Qt::LeftButton, {}, view.boxRect(target).center());
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().op, std::string("layer.1.mlp.up"));
        QVERIFY(view.boxRect(target).right() < view.width());
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
    }

    // A diagram wider than the view is scaled down a little, else its layers fold (each stack keeps its first and the
    // stepper's): every box drawn stays inside the view, unclipped, and a click on a folded run opens its first layer.
    void architectureFitsTheViewByScalingOrFolding()
    {
        const auto everyBoxInside = [](const ArchitectureView &view) {
            for (const DiagramBox &b : view.diagram().boxes) {
                const QRect r = view.boxRect(b.op).isEmpty() ? view.foldRect(b.column) : view.boxRect(b.op);
                if (r.isEmpty() || !view.rect().contains(r))
                    return false;
            }
            return true;
        };
        ViewSpec s;
        s.view = "architecture";
        s.model = "austen"; // 4 layers
        s.text = "It is a truth";
        ArchitectureView view;
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        view.resize(1280, 720);
        QVERIFY(everyBoxInside(view));
        QVERIFY(view.foldRect(2).isEmpty());
        view.resize(1280, 260); // too short: folding would not help, so the layers stay open
        QVERIFY(everyBoxInside(view));
        QVERIFY(view.foldRect(2).isEmpty());

        view.resize(700, 720);
        QVERIFY(everyBoxInside(view));
        const QRect folded = view.foldRect(3);
        QVERIFY(!folded.isEmpty());
        QCOMPARE(view.foldRect(2), folded); // layers 1–3 in one run
        QVERIFY(view.foldRect(1).isEmpty()); // layer 0 stays
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
        QSignalSpy edited(&view, &View::specEdited);
        QTest::mouseClick(&view, Qt::LeftButton, {}, folded.center());
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().op, std::string("layer.1.ln_1"));

        s.model = "seq2seq-sort";
        s.text = "dsfacdd";
        s.decoderText = ">acdddfs";
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        view.resize(1280, 720);
        QVERIFY(everyBoxInside(view));
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
    }
};

QTEST_MAIN(TestArchitectureView)
#include "tst_architectureview.moc"
