// Long inputs are drawn without holding up the window: what would take the GUI thread past a frame runs on a
// worker when the view is shown, at once when it is drawn headless, with the same picture either way.
#include "analysis/objectiveexample.h"
#include "heads/headsgridview.h"
#include "heatmaptesting.h"
#include "mask/maskview.h"
#include "objective/objectiveview.h"
#include "testbundle.h"
#include "views/downsample.h"
#include "views/heatmapplot.h"
#include "viewtesting.h"

#include <QTest>

#include <algorithm>

using namespace atlas;
using namespace atlas::testing;

namespace {

// A widget of `width` × `height` in a window that is shown and exposed (so drawnHeadless is false and long work
// goes to a worker), or null if the window never appeared.
template <class W> W *shownIn(QWidget &window, int width, int height)
{
    auto *widget = new W(&window);
    window.resize(width, height);
    widget->resize(width, height);
    window.show();
    return QTest::qWaitForWindowExposed(&window) ? widget : nullptr;
}

} // namespace

class TestOffGuiThread : public QObject
{
    Q_OBJECT

private slots:
    // Past kPoolOnWorkerCells a shown plot pools on a worker, with the same result as at once; a headless one
    // (render, lesson export) and finishPooling() pool at once.
    void largeMatricesPoolOnAWorker()
    {
        const int T = 2100;
        QVERIFY(int64_t(T) * T > HeatmapPlot::kPoolOnWorkerCells);
        auto cells = std::make_shared<std::vector<float>>(size_t(T) * T);
        for (size_t i = 0; i < cells->size(); ++i)
            (*cells)[i] = i % 7 == 3 ? -std::numeric_limits<float>::infinity() : float(i % 97) / 97.0f;
        QWidget window;
        auto *plot = shownIn<HeatmapPlot>(window, 700, 500);
        QVERIFY(plot);
        const Pooled expected = downsample(
            cells->data(), T, T, std::clamp(plot->height(), 16, 1024), std::clamp(plot->width(), 16, 1024));
        plot->setMatrix(cells->data(), T, T, cells);
        QVERIFY(plot->pooling());
        QTRY_VERIFY_WITH_TIMEOUT(!plot->pooling(), 20000);
        QCOMPARE(plot->pooled().values, expected.values);
        QCOMPARE(plot->colorMap()->data()->keySize(), expected.cols);

        plot->setMatrix(cells->data(), T, T, cells);
        QVERIFY(plot->pooling());
        plot->finishPooling();
        QVERIFY(!plot->pooling());
        QCOMPARE(plot->pooled().values, expected.values);

        HeatmapPlot headless; // unparented and hidden: `render` draws like this
        headless.resize(700, 500);
        headless.setMatrix(cells->data(), T, T, cells);
        QVERIFY(!headless.pooling());
        QCOMPARE(headless.pooled().rows, poolBlock(T, 500) > 1 ? (T + poolBlock(T, 500) - 1) / poolBlock(T, 500) : T);
    }

    // Shown with 2100 tokens, the Mask tab builds and pools its mask on a worker; the result is the same mask.
    void maskViewBuildsLongMasksOnAWorker()
    {
        const int T = 2100;
        auto trace = makeTrace(1, 1, T, false);
        QStringList tokens;
        for (int t = 0; t < T; ++t)
            tokens << QStringLiteral("t%1").arg(t);
        QWidget window;
        auto *view = shownIn<MaskView>(window, 1500, 560);
        QVERIFY(view);
        view->setSpec(makeSpec("mask", 0, 0));
        view->setInput(makeInput(trace, 1, 1, tokens));
        HeatmapPlot *mask = view->maskPlot();
        QTRY_VERIFY_WITH_TIMEOUT(mask->matrixRows() == T && !mask->pooling(), 20000);
        const Pooled &p = mask->pooled();
        QVERIFY(p.rows < T); // pooled
        QCOMPARE(p.at(0, p.cols - 1), kNegInf); // every key after the first queries: masked
        QCOMPARE(p.at(p.rows - 1, 0), 0.0f); // allowed
    }

    // Shown with 2100 tokens, the Objective tab makes its example and T² mask on a worker (0.4 s on the window's
    // thread before): a message first, then the example and its causal mask.
    void objectiveViewMakesLongExamplesOnAWorker()
    {
        ViewSpec spec;
        spec.view = "objective";
        spec.model = "austen";
        spec.text = "It is a truth universally acknowledged";
        ViewInput input = forSpec(spec);
        const std::vector<int> passage = input.tokenIds;
        input.tokenIds.clear();
        while (input.tokenIds.size() < 2100)
            input.tokenIds.insert(input.tokenIds.end(), passage.begin(), passage.end());
        input.tokenIds.resize(2100);
        QWidget window;
        auto *view = shownIn<ObjectiveView>(window, 1500, 700);
        QVERIFY(view);
        view->setSpec(spec);
        view->setInput(input);
        QVERIFY(!view->message().isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(view->example() != nullptr && view->message().isEmpty(), 20000);
        const int T = int(view->example()->text.input.size());
        QVERIFY(T >= 2100);
        HeatmapPlot *mask = view->maskPlot();
        QTRY_VERIFY_WITH_TIMEOUT(mask->matrixRows() == T && !mask->pooling(), 20000);
        const Pooled &p = mask->pooled();
        QCOMPARE(p.at(0, p.cols - 1), kNegInf); // the first queries see no later key
        QCOMPARE(p.at(p.rows - 1, 0), 0.0f);
    }

    // Above 1024 tokens a shown grid pools its thumbnails on a worker: "pooling…" first, then the same images a
    // headless grid makes at once.
    void headsGridPoolsLongInputsOffTheGuiThread()
    {
        auto trace = makeTrace(1, 2, 1100);
        QStringList tokens;
        for (int i = 0; i < 1100; ++i)
            tokens << QString::number(i % 10);
        QWidget window;
        auto *view = new HeadsGridView(&window);
        window.resize(600, 420);
        view->resize(600, 420);
        window.show();
        view->setInput(makeInput(trace, 1, 2, tokens));
        view->setSpec(makeSpec("heads", 0, 0));
        QVERIFY(view->pooling());
        QVERIFY(view->thumbnail(0, 1).isNull());
        QTRY_VERIFY_WITH_TIMEOUT(!view->pooling(), 10000);
        QVERIFY(!view->thumbnail(0, 1).isNull());

        HeadsGridView headless;
        headless.setInput(makeInput(trace, 1, 2, tokens));
        headless.setSpec(makeSpec("heads", 0, 0));
        QVERIFY(!headless.pooling());
        QCOMPARE(view->thumbnail(0, 1), headless.thumbnail(0, 1));
    }
};

QTEST_MAIN(TestOffGuiThread)
#include "tst_offguithread.moc"
