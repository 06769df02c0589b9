// The low-rank view: exact and approximated weights side by side, a slider over k / features, the error plot.
#include "attention/approximationsweep.h"
#include "util/error.h"
#include "views/approximationerrorplot.h"
#include "views/approximationview.h"
#include "views/heatmapplot.h"
#include "views/specrunner.h"

#include <QRadioButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTest>

#include <qcustomplot.h>

#include <cmath>

using namespace atlas;

class TestApproximationView : public QObject
{
    Q_OBJECT

    SpecRun m_run;

    ViewSpec spec(const std::string &kernel, int layer = 1, int head = 1) const
    {
        ViewSpec s;
        s.view = "approximation";
        s.approximation = kernel;
        s.layer = layer;
        s.head = head;
        return s;
    }

    // The core sweep on the same head, with the options the view ran.
    attention::ApproximationSweep coreSweep(const ApproximationView &view) const
    {
        const auto head = [&](const char *suffix) {
            return m_run.trace->find(traceName(view.spec().layer, suffix))->tensor.slice(view.spec().head);
        };
        return attention::approximation_sweep(head("attn.q"), head("attn.k"), head("attn.v"), view.sweepOptions());
    }

    static bool close(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

    static void expectGraph(const QCPGraph *g, const attention::ApproximationSweep &s, bool weights)
    {
        QCOMPARE(g->dataCount(), int(s.points.size())); // one point per k / features
        for (int i = 0; i < g->dataCount(); ++i) {
            const attention::ApproximationPoint &p = s.points[size_t(i)];
            QCOMPARE(g->data()->at(i)->key, double(p.value));
            const double expected = weights ? p.rowL1.mean : p.meanAbsError.mean;
            QVERIFY2(close(g->data()->at(i)->value, expected),
                qPrintable(QString("%1 vs %2 at %3").arg(g->data()->at(i)->value).arg(expected).arg(p.value)));
        }
    }

    static std::vector<float> drawn(const HeatmapPlot *plot) { return plot->pooled().values; }

private slots:
    void initTestCase()
    {
        ViewSpec s;
        s.model = "tiny-bytes";
        s.text = "The cat sat on the mat.";
        m_run = runSpec(s);
        QVERIFY(m_run.viewInput.causal);
    }

    void onePointPerKWithTheCoreSweepsValues()
    {
        QWidget window;
        auto *view = new ApproximationView(&window);
        window.resize(1400, 900);
        view->resize(1400, 900);
        window.show();
        view->setInput(m_run.viewInput);
        view->setSpec(spec("linformer"));
        QVERIFY(view->isComputing()); // on the worker: the GUI thread only sees it when it is delivered
        QVERIFY(view->message().contains("Computing"));
        QVERIFY(view->waitForSweep());
        QVERIFY2(view->message().isEmpty(), qPrintable(view->message()));
        const attention::ApproximationSweep expected = coreSweep(*view);
        const int64_t T = m_run.input.tokens.size();
        QCOMPARE(view->sweep()->points.size(), attention::defaultSweepValues("linformer", T).size());
        QVERIFY(!view->sweep()->causal); // linformer cannot be: both sides bidirectional, and the caption says so
        QVERIFY(view->caption().contains("bidirectional"));
        expectGraph(view->errorPlot()->weightGraph(), expected, true);
        expectGraph(view->errorPlot()->contextGraph(), expected, false);
        QCOMPARE(view->slider()->maximum(), int(expected.points.size()) - 1);
        QCOMPARE(view->selectedIndex(), int(expected.points.size()) / 2);
        // Both maps on the exact weights' colour scale.
        QCOMPARE(view->approximationPlot()->colorMap()->dataRange(), view->exactPlot()->colorMap()->dataRange());
        QCOMPARE(view->exactPlot()->matrixRows(), int(T));
        QVERIFY(!view->grab().isNull());
    }

    void movingTheSliderChangesTheDrawnMatrix()
    {
        QWidget window;
        auto *view = new ApproximationView(&window);
        view->resize(1400, 900);
        window.show();
        view->setInput(m_run.viewInput);
        view->setSpec(spec("linformer"));
        QVERIFY(view->waitForSweep());
        QSignalSpy edited(view, &View::specEdited);
        const std::vector<float> before = drawn(view->approximationPlot()), exact = drawn(view->exactPlot());
        const int oldValue = view->selectedValue();
        view->slider()->setValue(view->slider()->maximum());
        QCOMPARE(view->selectedValue(), int(m_run.input.tokens.size())); // k = T
        QVERIFY(view->selectedValue() != oldValue);
        QVERIFY(drawn(view->approximationPlot()) != before);
        QVERIFY(drawn(view->exactPlot()) == exact); // the exact side stays
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().approximationValue, view->selectedValue());
        // The drawn matrix is seed 0's weights at that k (masked cells aside: none without padding here).
        const attention::ApproximationPoint &p = view->sweep()->points.back();
        QCOMPARE(view->approximationPlot()->displayedValue(3, 5), double(p.weights.data()[3 * p.weights.dim(1) + 5]));
    }

    void performerSwitchRunsTheCausalSweep()
    {
        QWidget window;
        auto *view = new ApproximationView(&window);
        view->resize(1400, 900);
        window.show();
        view->setInput(m_run.viewInput);
        view->setSpec(spec("linformer"));
        QVERIFY(view->waitForSweep());
        QSignalSpy edited(view, &View::specEdited);
        view->performerButton()->click();
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.at(0).at(0).value<ViewSpec>().approximation, std::string("performer"));
        QVERIFY(view->isComputing());
        QVERIFY(view->waitForSweep());
        const attention::ApproximationSweep *s = view->sweep();
        QCOMPARE(s->kernel, std::string("performer"));
        QVERIFY(s->causal); // the model is
        QCOMPARE(s->points.front().value, 8);
        QCOMPARE(s->points.back().value, 1024);
        expectGraph(view->errorPlot()->weightGraph(), coreSweep(*view), true);
        const attention::ApproximationPoint &p = s->points[size_t(view->selectedIndex())];
        const int64_t T = s->T;
        for (int64_t i = 0; i < T; ++i) { // implied weights: rows sum to 1, nothing on future keys
            QVERIFY(std::abs(p.weights.matrix().row(i).sum() - 1.0f) < 1e-4);
            QVERIFY(i + 1 == T || p.weights.matrix().row(i).tail(T - i - 1).cwiseAbs().maxCoeff() == 0.0f);
        }
    }

    void aNewerRequestSupersedesAnOlderOne()
    {
        QWidget window;
        auto *view = new ApproximationView(&window);
        window.show();
        view->setInput(m_run.viewInput);
        view->setSpec(spec("performer", 0, 0));
        view->setSpec(spec("performer", 1, 3)); // before the first is delivered
        QVERIFY(view->waitForSweep());
        const attention::ApproximationSweep expected = coreSweep(*view);
        QCOMPARE(view->spec().head, 3);
        expectGraph(view->errorPlot()->contextGraph(), expected, false);
        QTest::qWait(50); // a late delivery of the older sweep must not replace it
        expectGraph(view->errorPlot()->contextGraph(), expected, false);
    }

    void headlessViewComputesAtOnce()
    {
        ApproximationView view; // parentless and never shown, as `render` draws it
        view.resize(1200, 800);
        view.setInput(m_run.viewInput);
        ViewSpec s = spec("linformer");
        s.approximationValue = 4;
        view.setSpec(s);
        QVERIFY(!view.isComputing());
        QVERIFY(view.sweep() != nullptr);
        QCOMPARE(view.selectedValue(), 4);
        QVERIFY(view.approximationPlot()->matrixRows() > 0);
    }

    void specKeysRoundTrip()
    {
        ViewSpec s = spec("performer");
        s.approximationValue = 64;
        const ViewSpec back = ViewSpec::fromJson(s.toJson(), "test");
        QCOMPARE(back.approximation, std::string("performer"));
        QCOMPARE(back.approximationValue, 64);
        QVERIFY_THROWS_EXCEPTION(Error, ViewSpec::fromJson(R"({"approximation": "lsh"})", "test"));
        QVERIFY_THROWS_EXCEPTION(Error, ViewSpec::fromJson(R"({"approximation_value": -1})", "test"));
    }

    void missingTensorsAreAMessage()
    {
        ApproximationView view;
        view.setInput(ViewInput {});
        QVERIFY(view.message().contains("Not computed yet"));
        QVERIFY(view.sweep() == nullptr);
        QVERIFY(!view.isComputing());
    }
};

QTEST_MAIN(TestApproximationView)
#include "tst_approximationview.moc"
