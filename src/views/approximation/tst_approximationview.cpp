// The low-rank view draws the session's approximation sweep: exact and approximated weights side by side, a
// slider over k / features, the error plot. (tst_session checks that the session runs the sweep off the GUI
// thread, the newest request winning.)
#include "approximation/approximation.h"
#include "approximation/approximationview.h"
#include "attention/approximationsweep.h"
#include "testbundle.h"
#include "trace/names.h"
#include "util/error.h"
#include "views/approximationerrorplot.h"
#include "views/heatmapplot.h"
#include "viewtesting.h"

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
    ViewInput m_input; // without an analysis

    // The view given the spec and the session's sweep for it.
    void show(ApproximationView &view, const ViewSpec &s) const
    {
        view.setInput(testing::analyzed(m_input, s));
        view.setSpec(s);
    }

    ViewSpec spec(const std::string &kernel, int layer = 1, int head = 1) const
    {
        ViewSpec s;
        s.view = "approximation";
        s.set(views::approximation::kApproximation, kernel);
        s.layer = layer;
        s.head = head;
        return s;
    }

    // The core sweep on the same head, called directly: 5 seeds, causal for Performer on this causal model only.
    attention::ApproximationSweep coreSweep(const ApproximationView &view) const
    {
        const auto head = [&](const char *suffix) {
            return m_run.trace->find(names::layerTensor(view.spec().layer, suffix))->tensor.slice(view.spec().head);
        };
        attention::ApproximationSweepOptions options;
        options.kernel = view.spec().get(views::approximation::kApproximation);
        options.seeds = 5;
        options.causal = options.kernel == "performer";
        return attention::approximation_sweep(head("attn.q"), head("attn.k"), head("attn.v"), options);
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
        m_input = makeViewInput(m_run);
        QVERIFY(m_input.causal);
    }

    void onePointPerKWithTheCoreSweepsValues()
    {
        QWidget window;
        auto *view = new ApproximationView(&window);
        window.resize(1400, 900);
        view->resize(1400, 900);
        window.show();
        view->setInput(m_input); // no sweep yet: the session is computing it
        view->setSpec(spec("linformer"));
        QVERIFY(view->message().contains("Computing"));
        QVERIFY(view->sweep() == nullptr);
        show(*view, spec("linformer"));
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
        show(*view, spec("linformer"));
        QSignalSpy edited(view, &View::specEdited);
        const std::vector<float> before = drawn(view->approximationPlot()), exact = drawn(view->exactPlot());
        const int oldValue = view->selectedValue();
        view->slider()->setValue(view->slider()->maximum());
        QCOMPARE(view->selectedValue(), int(m_run.input.tokens.size())); // k = T
        QVERIFY(view->selectedValue() != oldValue);
        QVERIFY(drawn(view->approximationPlot()) != before);
        QVERIFY(drawn(view->exactPlot()) == exact); // the exact side stays
        QCOMPARE(edited.count(), 1);
        QCOMPARE(
            edited.at(0).at(0).value<ViewSpec>().get(views::approximation::kApproximationValue), view->selectedValue());
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
        show(*view, spec("linformer"));
        QSignalSpy edited(view, &View::specEdited);
        view->kernelButton("performer")->click();
        QCOMPARE(edited.count(), 1);
        const ViewSpec performer = edited.at(0).at(0).value<ViewSpec>();
        QCOMPARE(performer.get(views::approximation::kApproximation), std::string("performer"));
        QVERIFY(view->message().contains("Computing")); // the linformer sweep on hand is not drawn as performer's
        show(*view, performer);
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

    void theSpecsValueChoosesTheDrawnSize()
    {
        ApproximationView view; // parentless and never shown, as `render` draws it
        view.resize(1200, 800);
        ViewSpec s = spec("linformer");
        s.set(views::approximation::kApproximationValue, 4);
        show(view, s);
        QVERIFY(view.sweep() != nullptr);
        QCOMPARE(view.selectedValue(), 4);
        QVERIFY(view.approximationPlot()->matrixRows() > 0);
    }

    void specKeysRoundTrip()
    {
        ViewSpec s = spec("performer");
        s.set(views::approximation::kApproximationValue, 64);
        const ViewSpec back = ViewSpec::fromJson(s.toJson(), "test");
        QCOMPARE(back.get(views::approximation::kApproximation), std::string("performer"));
        QCOMPARE(back.get(views::approximation::kApproximationValue), 64);
        QVERIFY_THROWS_EXCEPTION(Error, ViewSpec::fromJson(R"({"approximation": "lsh"})", "test"));
        QVERIFY_THROWS_EXCEPTION(Error, ViewSpec::fromJson(R"({"approximation_value": -1})", "test"));
    }

    // After a rewind the view says why it has nothing to draw, and the error plot of the sweep it drew before is
    // gone (it stayed, empty axes under the message, issue 28); the next sweep brings it back.
    void aMessageNeverSitsOnOldAxes()
    {
        QWidget window;
        auto *view = new ApproximationView(&window);
        window.resize(1400, 900);
        view->resize(1400, 900);
        window.show();
        show(*view, spec("linformer"));
        QVERIFY2(view->message().isEmpty(), qPrintable(view->message()));
        QVERIFY(view->errorPlot()->isVisible());
        ViewInput rewound = testing::traced(m_run.model, m_run.input);
        rewound.trace = std::make_shared<const Trace>(Engine(m_run.model, m_run.input).trace()); // cursor 0
        view->setInput(testing::analyzed(rewound, spec("linformer")));
        QVERIFY(!view->message().isEmpty());
        QVERIFY(!view->errorPlot()->isVisible());
        show(*view, spec("linformer"));
        QVERIFY(view->errorPlot()->isVisible());
    }

    void missingTensorsAreAMessage()
    {
        ApproximationView view;
        view.setInput(testing::analyzed(ViewInput {}, spec("linformer")));
        QVERIFY2(view.message().contains("Nothing computed yet"), qPrintable(view.message()));
        QVERIFY(view.sweep() == nullptr);
        ViewInput stepped = testing::traced(m_run.model, m_run.input);
        Engine partial(m_run.model, m_run.input);
        partial.runTo(3); // before the Q, K, V split of layer 0
        stepped.trace = std::make_shared<const Trace>(partial.trace());
        ViewSpec first = spec("linformer", 0, 0);
        view.setInput(testing::analyzed(stepped, first));
        view.setSpec(first);
        QCOMPARE(view.message(), QString("Not computed yet: step to split heads in layer 0 (layer.0.attn.q)"));
    }
};

QTEST_MAIN(TestApproximationView)
#include "tst_approximationview.moc"
