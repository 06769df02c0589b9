// The memory lab's views draw the core's numbers: the computation graph (memory-graph) shows
// computationGraphAt's states at the spec's cursor and steps with Space; the depth, trade-off and inversion-error views
// plot their analyses' points and wait for a result asked with the spec's settings.
#include "inversionerror/inversionerrorview.h"
#include "layouttesting.h"
#include "memorydepth/memorydepth.h"
#include "memorydepth/memorydepthview.h"
#include "memorygraph/memorygraphview.h"
#include "memorytradeoff/memorytradeoff.h"
#include "memorytradeoff/memorytradeoffview.h"
#include "testbundle.h"
#include "util/workbudget.h"
#include "view/viewanalysis.h"
#include "views/plottheme.h"
#include "viewtesting.h"

#include <QLabel>
#include <QSignalSpy>
#include <QTest>

#include <cmath>

#include <qcustomplot.h>

using namespace atlas;

namespace {

ViewSpec memoryLabSpec(const std::string &view, const std::string &model, int depth = 4)
{
    ViewSpec s;
    s.view = view;
    s.model = model;
    s.text = "abcdef>fedcba";
    s.depth = depth;
    return s;
}

template <class V> void drawMemoryView(V &view, const ViewSpec &s)
{
    view.resize(1280, 720);
    view.setInput(testing::forSpec(s));
    view.setSpec(s);
}

} // namespace

class TestMemoryLabViews : public QObject
{
    Q_OBJECT

private slots:
    void graphShowsTheStatesAtTheCursor()
    {
        ViewSpec s = memoryLabSpec("memory-graph", "reverse-rev");
        s.cursor = 20;
        MemoryGraphView view;
        drawMemoryView(view, s);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.strategyRows(), 3);
        const auto *analysis = view.input().analysisAs<MemoryTimelineAnalysis>();
        QVERIFY(analysis);
        for (int row = 0; row < 3; ++row) {
            const std::vector<GraphNode> expected
                = computationGraphAt(analysis->timeline.strategies[size_t(row)], analysis->timeline.layers, 20);
            const std::vector<GraphNode> shown = view.nodes(row);
            QCOMPARE(shown.size(), expected.size());
            for (size_t i = 0; i < shown.size(); ++i)
                QCOMPARE(shown[i].state, expected[i].state);
        }
        QSignalSpy edited(&view, &View::specEdited);
        QTest::keyClick(&view, Qt::Key_Space);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<ViewSpec>().cursor, 21);
        QTest::keyClick(&view, Qt::Key_Home);
        QCOMPARE(view.spec().cursor, 0);
        QTest::keyClick(&view, Qt::Key_End);
        QCOMPARE(view.spec().cursor, analysis->timeline.maxOps - 1);
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image);
        QVERIFY(view.clippedTexts().isEmpty());
    }

    void graphWaitsForItsOwnRecording()
    {
        ViewSpec s = memoryLabSpec("memory-graph", "reverse-rev");
        MemoryGraphView view;
        drawMemoryView(view, s);
        QVERIFY(view.message().isEmpty());
        s.checkpointEvery = 1; // the session still holds the recording for k = ⌈√L⌉
        view.setSpec(s);
        QVERIFY(view.message().startsWith("Computing"));
    }

    // Over the work budget the graph's place says why, with the estimate, and "Run anyway" is a link that asks the
    // window to run it.
    void graphOverTheBudgetOffersToRunAnyway()
    {
        const ViewSpec s = memoryLabSpec("memory-graph", "reverse-rev");
        const WorkBudget saved = WorkBudget::process();
        WorkBudget::process().flops = 1e3;
        MemoryGraphView view;
        drawMemoryView(view, s);
        WorkBudget::process() = saved;
        QVERIFY2(view.message().startsWith("Three training steps of 13 tokens"), qPrintable(view.message()));
        testing::maybeSave(view, "memory-graph-over-the-budget");
        ViewSpec dark = s;
        dark.theme = "dark";
        view.setSpec(dark);
        QVERIFY2(view.message().startsWith("Three training steps"), qPrintable(view.message()));
        testing::maybeSave(view, "memory-graph-over-the-budget-dark");
        QCOMPARE(view.strategyRows(), 0);
        QLabel *message = nullptr;
        for (QLabel *label : view.findChildren<QLabel *>())
            if (label->isVisibleTo(&view) && label->text().contains("href=\"run-anyway:\""))
                message = label;
        QVERIFY(message);
        // The link in the theme's accent: Qt's rich text would give it the application's blue, unreadable on dark.
        QVERIFY2(message->text().contains(themeColors("dark").accent.name()), qPrintable(message->text()));
        QSignalSpy asked(&view, &View::runAnywayRequested);
        emit message->linkActivated("run-anyway:");
        QCOMPARE(asked.count(), 1);
    }

    void depthViewPlotsEveryPointAndItsFit()
    {
        const ViewSpec s = memoryLabSpec("memory-depth", "reverse");
        MemoryDepthView view;
        drawMemoryView(view, s);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<MemoryDepthAnalysis>();
        QVERIFY(a);
        // per strategy: the fitted curve, the measured points, the step times
        QCOMPARE(view.plot()->graphCount(), 9);
        QCOMPARE(view.plot()->graph(1)->dataCount(), 3); // depths 1, 2, 4
        QCOMPARE(view.plot()->graph(1)->data()->at(2)->value,
            double(a->points[6].peakActivationBytes) / double(1 << 20)); // plain at depth 4
        QVERIFY2(view.caption().contains("Depth 4:"), qPrintable(view.caption()));
        QVERIFY(view.plot()->graph(0)->name().contains("O(L)"));
        QVERIFY(view.plot()->graph(1)->name().isEmpty());
        ViewSpec deeper = s;
        deeper.depth = 8;
        view.setSpec(deeper); // an older result is not drawn as this one
        QVERIFY(!view.message().isEmpty());
    }

    void tradeoffViewRingsTheSquareRoot()
    {
        const ViewSpec s = memoryLabSpec("memory-tradeoff", "reverse", 4);
        MemoryTradeoffView view;
        drawMemoryView(view, s);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = view.input().analysisAs<MemoryTradeoffAnalysis>();
        QVERIFY(a);
        QCOMPARE(a->sqrtK, 2);
        auto *curve = qobject_cast<QCPCurve *>(view.plot()->plottable(0));
        QVERIFY(curve);
        QCOMPARE(curve->dataCount(), 4); // k = 1 … 4
        QVERIFY(view.caption().contains("k = ⌈√L⌉ = 2"));
        QVERIFY(view.title().contains("k = 1 … 4"));
        // A tab not switched yet is handed the next view's spec and result (a lesson's step from the trade-off to the
        // depth sweep, with the same settings): it waits rather than draw a result of another type.
        MemoryDepthView depth;
        drawMemoryView(depth, s);
        QVERIFY2(!depth.message().isEmpty(), "the depth view drew the trade-off's result");
    }

    void inversionViewDrawsEveryPrecision()
    {
        const ViewSpec s = memoryLabSpec("inversion-error", "reverse-rev", 0);
        InversionErrorView view;
        drawMemoryView(view, s);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.plot()->graphCount(), 4);
        QCOMPARE(view.plot()->graph(2)->name(), QString("float16"));
        QVERIFY(view.caption().contains("own weights"));
        // Blocks are counted: whole-number ticks only (block 2.5 and 7.5 were labelled before).
        QCPAxis *blocks = view.plot()->graph(0)->keyAxis();
        blocks->setRange(-0.5, 15.5);
        view.plot()->replot();
        for (double tick : blocks->tickVector())
            QCOMPARE(tick, std::round(tick));
        QVERIFY(blocks->tickVector().size() >= 3);
        const ViewSpec standard = memoryLabSpec("inversion-error", "reverse", 0);
        drawMemoryView(view, standard);
        QVERIFY(view.message().contains("standard blocks"));
    }
};

QTEST_MAIN(TestMemoryLabViews)
#include "tst_memorylabviews.moc"
