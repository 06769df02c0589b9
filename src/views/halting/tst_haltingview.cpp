// The Halting view (src/views/halting): the caption's numbers are the trace's, the rings sit at each token's halting
// block, and a model without a halting unit, or a run not finished, says so.
#include "halting/halting.h"
#include "halting/haltingview.h"
#include "testbundle.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace atlas;

class TestHaltingView : public QObject
{
    Q_OBJECT

private slots:
    void haltingDrawsEachTokensBlocks()
    {
        ViewSpec spec;
        spec.view = "halting";
        spec.model = "austen-act";
        spec.text = "She was not in the habit of walking out alone";
        HaltingView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<HaltingAnalysis>();
        QVERIFY(a);
        QCOMPARE(a->tokens, 45);
        const Tensor &ponder = view.input().trace->tensor(names::haltingTensor("ponder")),
                     &steps = view.input().trace->tensor(names::haltingTensor("steps"));
        const double mean = std::accumulate(ponder.data(), ponder.data() + ponder.numel(), 0.0) / 45.0,
                     blocks = std::accumulate(steps.data(), steps.data() + steps.numel(), 0.0) / 45.0;
        QVERIFY2(
            view.caption().contains("runs " + formatNumber(blocks, 3) + " of 6 blocks"), qPrintable(view.caption()));
        QVERIFY2(view.caption().contains("N + R is " + formatNumber(mean, 3)), qPrintable(view.caption()));
        double spaces = 0; // the spaces' mean N, which the caption gives by kind of character
        const double count = double(std::count(spec.text.begin(), spec.text.end(), ' '));
        for (size_t t = 0; t < spec.text.size(); ++t)
            if (spec.text[t] == ' ')
                spaces += steps.data()[t] / count;
        QVERIFY2(view.caption().contains("by the character read: spaces " + formatNumber(spaces, 3) + ", vowels "),
            qPrintable(view.caption()));
        for (int t = 0; t < a->tokens; ++t) { // the weights sum to 1, and none after the halting block
            double sum = 0;
            for (int n = 0; n < a->layers; ++n) {
                sum += a->weights[size_t(t * a->layers + n)];
                if (n >= a->steps[size_t(t)])
                    QCOMPARE(a->weights[size_t(t * a->layers + n)], 0.0f);
            }
            QVERIFY(std::fabs(sum - 1.0) < 1e-5);
        }
        QVERIFY(std::isfinite(a->surprise[0]) && std::isnan(a->surprise[44]));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));

        spec.model = "austen";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("has no halting unit"), qPrintable(view.message()));

        spec.model = "austen-act";
        spec.op = "layer.5.out";
        view.setSpec(spec);
        view.setInput(testing::forSpec(spec));
        QVERIFY2(view.message().contains("run to the end"), qPrintable(view.message()));
    }

    // austen-ut's six blocks are one block applied six times: the title and the caption say so.
    void haltingSaysTheBlockIsShared()
    {
        ViewSpec spec;
        spec.view = "halting";
        spec.model = "austen-ut";
        spec.text = "She was not in the habit of";
        HaltingView view;
        QVERIFY(testing::shown(view, spec, testing::forSpec(spec)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QVERIFY(view.input().analysisAs<HaltingAnalysis>()->sharedBlock);
        QVERIFY2(view.title().contains("one block applied up to 6 times"), qPrintable(view.title()));
        QVERIFY2(view.caption().contains("one block's weights, shared"), qPrintable(view.caption()));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY2(view.clippedTexts().isEmpty(), qPrintable(view.clippedTexts().join(", ")));
    }

    // `max_steps` runs austen-ut's block up to another count. A token's halting sum after n applications does not
    // depend on the cap, so a token that halted before the trained 6 halts at the same application with 16 allowed, and
    // one that the trained cap stopped at 6 runs 6 or more. austen-act's blocks are its own: max_steps is refused by
    // name.
    void haltingRunsAnotherDepth()
    {
        ViewSpec spec;
        spec.view = "halting";
        spec.model = "austen-ut";
        spec.text = "She was not in the habit of walking out alone";
        HaltingView own;
        QVERIFY(testing::shown(own, spec, testing::forSpec(spec)));
        const auto *six = own.input().analysisAs<HaltingAnalysis>();
        QVERIFY(six);
        QCOMPARE(six->layers, 6);
        QVERIFY(own.maxStepsBox()->isEnabled());
        QCOMPARE(own.maxStepsBox()->text(), QString("as trained (6)"));
        QSignalSpy edited(&own, &View::specEdited);
        own.maxStepsBox()->setValue(16);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().get(views::halting::kMaxSteps), 16);

        spec.set(views::halting::kMaxSteps, 16);
        HaltingView deeper;
        QVERIFY(testing::shown(deeper, spec, testing::forSpec(spec)));
        QVERIFY2(deeper.message().isEmpty(), qPrintable(deeper.message()));
        const auto *sixteen = deeper.input().analysisAs<HaltingAnalysis>();
        QVERIFY(sixteen);
        QCOMPARE(sixteen->layers, 16);
        QCOMPARE(sixteen->trained, 6);
        QCOMPARE(sixteen->tokens, six->tokens);
        int past = 0;
        for (int t = 0; t < six->tokens; ++t) {
            const int before = six->steps[size_t(t)], after = sixteen->steps[size_t(t)];
            if (before < 6)
                QCOMPARE(after, before);
            else
                QVERIFY(after >= 6);
            past += after > 6;
            double sum = 0;
            for (int n = 0; n < 16; ++n)
                sum += sixteen->weights[size_t(t * 16 + n)];
            QVERIFY(std::fabs(sum - 1.0) < 1e-5);
        }
        QVERIFY2(
            deeper.title().contains("one block applied up to 16 times, trained with 6"), qPrintable(deeper.title()));
        QVERIFY2(deeper.caption().contains(QString("%1 of %2 tokens run past 6").arg(past).arg(six->tokens)),
            qPrintable(deeper.caption()));
        QImage image(deeper.size(), QImage::Format_ARGB32);
        deeper.render(&image);
        QVERIFY2(deeper.clippedTexts().isEmpty(), qPrintable(deeper.clippedTexts().join(", ")));

        spec.model = "austen-act";
        spec.set(views::halting::kMaxSteps, 3);
        deeper.setSpec(spec);
        deeper.setInput(testing::forSpec(spec));
        QVERIFY2(deeper.message().contains("austen-act has a block of its own at each of its 6 layers"),
            qPrintable(deeper.message()));
    }
};

QTEST_MAIN(TestHaltingView)
#include "trace/names.h"
#include "tst_haltingview.moc"
