// The architecture diagram (views/architectureview.h): a box per op of the program, the stepper's outlined, a click
// asks for its op; a diagram wider than the view is scaled, or its layers folded, so that every box stays inside.
#include "architecture/architectureview.h"
#include "testbundle.h"
#include "viewtesting.h"

#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

using namespace atlas;

class TestArchitectureView : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // the animation speed is a setting: not the user's
    }

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

    // Every arrow joins its boxes: it starts on the box that writes the tensor and ends, with its head, on the one
    // that reads it; the stream runs down the left of the columns, the encoder's output into each cross K/V
    // projection's right side.
    void arrowsJoinTheBoxesTheyConnect()
    {
        const auto touches = [](const QRectF &box, const QPointF &point) {
            return box.adjusted(-2, -2, 2, 2).contains(point) && !box.adjusted(2, 2, -2, -2).contains(point);
        };
        for (const auto &[model, text, decoder] : std::vector<std::tuple<std::string, std::string, std::string>> {
                 {"reverse", "abcd>dcb", ""}, {"seq2seq-sort", "dbca", ">ab"}}) {
            ViewSpec s;
            s.view = "architecture";
            s.model = model;
            s.text = text;
            s.decoderText = decoder;
            ArchitectureView view;
            view.resize(1280, 720);
            view.setInput(testing::forSpec(s));
            view.setSpec(s);
            const ArchitectureDiagram &d = view.diagram();
            QVERIFY(!d.edges.empty());
            int encoderArrows = 0;
            for (int e = 0; e < int(d.edges.size()); ++e) {
                const DiagramEdge &edge = d.edges[size_t(e)];
                const QPainterPath path = view.edgePath(e);
                const QString what = QString::fromStdString(model + ": " + edge.tensor);
                QVERIFY2(!path.isEmpty(), qPrintable(what)); // nothing folded at this size
                QVERIFY2(touches(view.boxRect(edge.from), path.pointAtPercent(0)), qPrintable(what));
                QVERIFY2(touches(view.boxRect(edge.to), path.currentPosition()), qPrintable(what));
                QVERIFY2(view.rect().contains(path.boundingRect().toAlignedRect()), qPrintable(what));
                if (edge.kind == DiagramEdge::Kind::Stream) // into the left side of its reader
                    QVERIFY(qAbs(path.currentPosition().x() - view.boxRect(edge.to).left()) <= 2);
                if (edge.kind == DiagramEdge::Kind::EncoderKeyValue) {
                    ++encoderArrows;
                    QVERIFY(qAbs(path.currentPosition().x() - view.boxRect(edge.to).right()) <= 2);
                }
            }
            QCOMPARE(encoderArrows, model == "seq2seq-sort" ? 2 : 0);
            QImage image(view.size(), QImage::Format_ARGB32);
            view.render(&image);
            QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
        }
    }

    // A step forward pulses along the arrows into the new operation, for as long as the chosen speed says, and not
    // when the animation is off, for a step back, or for a new input.
    void aStepForwardPulsesIntoTheNewOperation()
    {
        ViewSpec s;
        s.view = "architecture";
        s.model = "reverse";
        s.text = "abcd>dcb";
        s.op = "layer.0.attn.scores";
        const SpecRun before = runSpec(s);
        s.op = "layer.0.attn.masked";
        SpecRun after = runSpec(s);
        after.model = before.model; // one model and input, stepped on: as the app's stepper runs them
        const ViewInput first = makeViewInput(before), next = makeViewInput(after);

        ArchitectureView view;
        view.resize(1280, 720);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setAnimation(ArchitectureView::Animation::Fast);
        QCOMPARE(view.animationMilliseconds(), 400);
        view.setSpec(s);
        view.setInput(first);
        QVERIFY(!view.animating());
        view.setInput(next);
        QVERIFY(view.animating());
        QVERIFY(view.pulseProgress() < 1);
        QVERIFY(!edgesInto(view.diagram(), view.diagram().current).empty());
        QTRY_VERIFY_WITH_TIMEOUT(!view.animating(), 3000);

        view.setInput(first); // back: drawn at once
        QVERIFY(!view.animating());
        view.setInput(testing::forSpec(s)); // forward, but another run (its own model): drawn at once
        QVERIFY(!view.animating());
        view.setInput(first);
        view.setAnimation(ArchitectureView::Animation::Off);
        view.setInput(next);
        QVERIFY(!view.animating());
        QCOMPARE(QSettings().value("views/architectureAnimation").toString(), QString("off"));
        ArchitectureView another; // the speed is kept
        QCOMPARE(another.animation(), ArchitectureView::Animation::Off);
    }
};

QTEST_MAIN(TestArchitectureView)
#include "tst_architectureview.moc"
