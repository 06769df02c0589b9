// The kernel comparison view: one panel per kernel with its errors, and the measured time plot.
#include "engine/engine.h"
#include "views/kernelcompareview.h"

#include <QTest>
#include <QWidget>
#include <qcustomplot.h>

#include <cmath>

using namespace atlas;

class TestKernelCompareView : public QObject
{
    Q_OBJECT

    std::shared_ptr<const Trace> m_trace;

    ViewInput input() const
    {
        ViewInput in;
        in.trace = m_trace;
        in.causal = true;
        return in;
    }

private slots:
    void initTestCase()
    {
        auto model = std::make_shared<Model>(Model::load(ATLAS_TEST_DATA "/gpt2_tiny"));
        Engine e(model, {{3, 17, 42, 8, 0, 25, 49, 11}, {}, {}});
        e.runToEnd();
        m_trace = std::make_shared<Trace>(e.trace());
    }

    // In the window the comparison runs on a worker: the view says so, then draws the same numbers the
    // headless view computes at once; switching head again before it ends shows only the newest.
    void inTheWindowTheComparisonRunsOffTheGuiThread()
    {
        QWidget window;
        auto *view = new KernelCompareView(&window);
        window.resize(1400, 900);
        view->resize(1400, 900);
        window.show();
        ViewSpec spec;
        spec.view = "kernels";
        spec.layer = 1;
        spec.head = 0;
        view->setSpec(spec);
        view->setInput(input());
        QVERIFY(view->message().startsWith("Comparing"));
        QCOMPARE(view->panelCount(), 0);
        spec.head = 2;
        view->setSpec(spec);
        QTRY_VERIFY_WITH_TIMEOUT(!view->comparing() && view->panelCount() == 8, 10000);
        QVERIFY2(view->message().isEmpty(), qPrintable(view->message()));

        KernelCompareView headless;
        headless.setSpec(spec);
        headless.setInput(input());
        QCOMPARE(headless.panelCount(), 8);
        for (int i = 0; i < 8; ++i)
            QCOMPARE(view->entries()[size_t(i)].meanAbsError, headless.entries()[size_t(i)].meanAbsError);
    }

    void onePanelPerKernelAndTheTimePlot()
    {
        KernelCompareView view;
        view.resize(1400, 900);
        ViewSpec spec;
        spec.view = "kernels";
        spec.layer = 1;
        spec.head = 2;
        view.setSpec(spec);
        view.setInput(input());
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.panelCount(), 8);
        QCOMPARE(view.entries()[0].spec.kind, std::string("full"));
        QCOMPARE(view.entries()[0].maxAbsError, 0.0);
        QCOMPARE(view.entries()[0].meanKl, 0.0);
        bool someDiffer = false;
        for (int i = 0; i < view.panelCount(); ++i) {
            const auto &e = view.entries()[size_t(i)];
            if (e.spec.kind == "linformer") { // the model is causal
                QVERIFY(e.skipped);
                QVERIFY(view.errorText(i).contains("causal"));
                continue;
            }
            QVERIFY2(!e.skipped, e.reason.c_str());
            QVERIFY(std::isfinite(e.maxAbsError) && std::isfinite(e.meanAbsError) && std::isfinite(e.meanKl));
            QVERIFY(view.errorText(i).startsWith(QStringLiteral("max\u00A0|ΔC|")));
            someDiffer = someDiffer || e.maxAbsError > 1e-4;
        }
        QVERIFY(someDiffer); // T = 8 with window 4 or stride 4 must drop some weight
        QVERIFY(view.timePlot()->graphCount() == 8);
        QVERIFY(view.timePlot()->graph(0)->name().contains("O(N²)"));
        QVERIFY(view.timePlot()->graph(0)->dataCount() >= 2);
        QVERIFY(view.benchmarkMessage().isEmpty());
        QVERIFY(!view.grab().isNull());
    }

    void missingJsonIsAMessage()
    {
        KernelCompareView view;
        view.setBenchmarkFile("/nonexistent/attention-sweep.json");
        view.setInput(input());
        QCOMPARE(view.timePlot()->graphCount(), 0);
        QVERIFY(view.benchmarkMessage().contains("/nonexistent/attention-sweep.json"));
        QVERIFY(!view.grab().isNull());
    }

    void missingTensorsAreAMessage()
    {
        KernelCompareView view;
        view.setInput(ViewInput {});
        QCOMPARE(view.panelCount(), 0);
        QVERIFY(!view.message().isEmpty());
    }
};

QTEST_MAIN(TestKernelCompareView)
#include "tst_kernelcompareview.moc"
