// The interpretability views as a researcher reads them: the logit lens's grid (the output on top, the embedding at
// the bottom), each cell's most probable token written in it and equal to the model's own prediction on the top row,
// a tracked target's probabilities, the rows so far while stepping, and a target the tokenizer cannot read as one
// token refused with its key; adaptive spans, rollout and patching.
#include "testbundle.h"
#include "view/viewanalysis.h"
#include "views/adaptivespanview.h"
#include "views/heatmapplot.h"
#include "views/logitlensview.h"
#include "views/patchingview.h"
#include "views/rolloutview.h"
#include "viewtesting.h"

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>

using namespace atlas;

namespace {

ViewSpec lensSpec(const std::string &target = {})
{
    ViewSpec spec;
    spec.view = "logit-lens";
    spec.model = "reverse";
    spec.text = "abcdefgh>hgfedcba";
    spec.target = target;
    return spec;
}

} // namespace

class TestInterpretabilityViews : public QObject
{
    Q_OBJECT

private slots:
    void theLensWritesWhatEachStreamPredicts()
    {
        const ViewSpec spec = lensSpec();
        const ViewInput input = testing::forSpec(spec);
        LogitLensView view;
        view.resize(1200, 700);
        view.setSpec(spec);
        view.setInput(input);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const int layers = input.model->config.layers;
        QCOMPARE(view.plot()->matrixRows(), layers + 1);
        QTRY_VERIFY(!view.cellText(0, 0).isEmpty()); // written once the plot is laid out
        const Tensor &probs = input.trace->tensor("next_probs");
        const int V = int(probs.dim(1));
        for (int t = 0; t < int(input.tokens.size()); ++t) { // the top row: the model's own next token
            const float *p = probs.data() + size_t(t) * size_t(V);
            QCOMPARE(view.cellText(0, t), vocabularyLabel(input, int(std::max_element(p, p + V) - p)));
            QVERIFY(std::abs(view.plot()->displayedValue(0, t) - *std::max_element(p, p + V)) < 1e-5);
        }
        QVERIFY(view.plot()->title().contains("what each stream would predict"));
        QVERIFY(view.formula().contains("Z = LN_f(X) W_te"));
        QVERIFY(view.plot()->hoverTextAt(view.plot()->cellCenter(layers, 2)).contains("the embedding"));
    }

    void aTrackedTokenColoursTheCells()
    {
        const ViewSpec spec = lensSpec("#5");
        const ViewInput input = testing::forSpec(spec);
        LogitLensView view;
        view.resize(1200, 700);
        view.setSpec(spec);
        view.setInput(input);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = input.analysisAs<LogitLensAnalysis>();
        QVERIFY(a && a->lens.target == 5);
        const Tensor &probs = input.trace->tensor("next_probs");
        for (int t = 0; t < int(input.tokens.size()); ++t)
            QVERIFY(std::abs(view.plot()->displayedValue(0, t) - probs.data()[size_t(t) * size_t(probs.dim(1)) + 5])
                < 1e-5);
        QVERIFY(view.plot()->title().contains("probability of"));
        QVERIFY(view.plot()->hoverTextAt(view.plot()->cellCenter(1, 3)).contains("rank"));
    }

    void theRowsFollowTheStepperAndABadTargetIsNamed()
    {
        ViewSpec spec = lensSpec();
        spec.op = "layer.0.out"; // the stepper after the first block
        LogitLensView view;
        view.resize(1200, 700);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.plot()->matrixRows(), 2);
        QVERIFY(view.plot()->title().contains("computed so far"));

        const ViewSpec bad = lensSpec("ab");
        view.setSpec(bad);
        view.setInput(testing::forSpec(bad));
        QVERIFY2(view.message().contains("target \"ab\" is 2 tokens"), qPrintable(view.message()));
    }

    // Adaptive span: a bar per head with the model's spans, the caption's numbers the analysis's, a click on a bar
    // chooses that head; a model without spans is refused by name.
    void adaptiveSpanDrawsEveryHeadsSpan()
    {
        ViewSpec spec;
        spec.view = "adaptive-span";
        spec.model = "copy-span";
        spec.text = "qzkxwabmeq|qzkxwabmeq";
        AdaptiveSpanView view;
        view.resize(1280, 720);
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
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

    // Rollout and flow: the map is the rollout of every position, the bars of the spec's position are the last
    // layer's combined attention, that row of the map and the normalised flow; max fusion is another rollout; an
    // encoder-decoder's cross-attention is refused with the sites that work.
    void rolloutDrawsTheMapAndThePositionsBars()
    {
        ViewSpec spec;
        spec.view = "rollout";
        spec.model = "reverse";
        spec.text = "abcdefgh>hgfedcba";
        spec.position = 12;
        const ViewInput input = testing::forSpec(spec);
        RolloutView view;
        view.resize(1200, 700);
        view.setSpec(spec);
        view.setInput(input);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = input.analysisAs<RolloutAnalysis>();
        QVERIFY(a);
        const int T = int(input.tokens.size());
        QCOMPARE(view.rolloutPlot()->matrixRows(), T);
        QCOMPARE(view.rolloutPlot()->markedRow(), 12);
        double flowSum = 0;
        for (int j = 0; j < T; ++j) {
            QVERIFY(std::abs(view.bars(1)->data()->at(j)->value - a->rollout(12, j)) < 1e-12);
            flowSum += view.bars(2)->data()->at(j)->value;
            if (j > 12) // causal: nothing reaches position 12 from later tokens
                QCOMPARE(view.bars(1)->data()->at(j)->value, 0.0);
        }
        QVERIFY(std::abs(flowSum - 1) < 1e-9);
        double lastSum = 0;
        for (int j = 0; j < T; ++j)
            lastSum += view.bars(0)->data()->at(j)->value;
        QVERIFY(std::abs(lastSum - 1) < 1e-6); // the heads' mean attention of one row
        QVERIFY(view.caption().contains("normalised"));

        ViewSpec max = spec;
        max.rolloutHeads = "max";
        const ViewInput maxInput = testing::forSpec(max);
        view.setSpec(max);
        view.setInput(maxInput);
        QVERIFY(view.message().isEmpty());
        QVERIFY(maxInput.analysisAs<RolloutAnalysis>()->rollout.isApprox(a->rollout) == false);

        ViewSpec cross;
        cross.view = "rollout";
        cross.model = "seq2seq-sort";
        cross.text = "dbca";
        cross.decoderText = "abcd";
        cross.site = "cross";
        view.setSpec(cross);
        view.setInput(testing::forSpec(cross));
        QVERIFY2(view.message().contains("Encoder or Decoder self-attention"), qPrintable(view.message()));
    }

    // Patching copy's induction: the changed letter after the first "x" restores the answer when patched into the
    // stream entering block 0 at its own position, and entering block 1 at the last position, where layer 0 moved it.
    void patchingTracesTheLetterThroughTheLayers()
    {
        ViewSpec spec;
        spec.view = "patching";
        spec.model = "copy";
        spec.text = "qzkxwmbt|qzkx";
        spec.corruptedText = "qzkxambt|qzkx";
        spec.target = "w";
        spec.contrast = "a";
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

        spec.patch = "heads";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QCOMPARE(view.plot()->matrixCols(), 4);
        QVERIFY(view.plot()->displayedValue(0, 3) > 0.99); // lesson 2's induction head

        QSignalSpy cancelled(&view, &View::analysisCancelled); // the window stops the session's sweep on it
        view.cancelButton()->click();
        QCOMPARE(cancelled.count(), 1);

        spec.corruptedText = "qzkxambt|qz"; // two tokens short
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
        spec.corruptedText = "qzkxambt|qzkx";
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

QTEST_MAIN(TestInterpretabilityViews)
#include "tst_interpretabilityviews.moc"
