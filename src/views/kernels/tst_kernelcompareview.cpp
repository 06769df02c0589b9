// The kernel comparison view draws the session's comparison: one panel per kernel with its errors, and the
// measured time plot read through the core's sweep-file parser.
#include "kernels/kernelcompareview.h"
#include "testbundle.h"
#include "viewtesting.h"

#include <QTest>
#include <QWidget>
#include <qcustomplot.h>

#include <cmath>

using namespace atlas;

class TestKernelCompareView : public QObject
{
    Q_OBJECT

    ViewInput m_input;

    ViewInput input(const ViewSpec &spec) const { return testing::analyzed(m_input, spec); }

    static ViewSpec kernels(int layer, int head)
    {
        ViewSpec spec;
        spec.view = "kernels";
        spec.layer = layer;
        spec.head = head;
        return spec;
    }

private slots:
    void initTestCase()
    {
        auto model = std::make_shared<Model>(Model::load(ATLAS_TEST_DATA "/gpt2_tiny"));
        m_input = testing::traced(model, {{3, 17, 42, 8, 0, 25, 49, 11}, {}, {}});
        QVERIFY(m_input.causal);
    }

    // Until the session's comparison of this head arrives the view says it is comparing; a comparison of another
    // head is not drawn as this one's.
    void withoutTheComparisonOfThisHeadTheViewWaits()
    {
        KernelCompareView view;
        view.resize(1400, 900);
        view.setSpec(kernels(1, 0));
        view.setInput(m_input);
        QVERIFY(view.message().startsWith("Comparing"));
        QCOMPARE(view.panelCount(), 0);
        view.setInput(input(kernels(1, 2)));
        QVERIFY(view.message().startsWith("Comparing"));
        view.setSpec(kernels(1, 2));
        QCOMPARE(view.panelCount(), int(attention::attentionKernelKinds().size()));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
    }

    void onePanelPerKernelAndTheTimePlot()
    {
        KernelCompareView view;
        view.resize(1400, 900);
        view.setSpec(kernels(1, 2));
        view.setInput(input(kernels(1, 2)));
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        QCOMPARE(view.panelCount(), int(attention::attentionKernelKinds().size()));
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
        view.setInput(input(kernels(0, 0)));
        QCOMPARE(view.timePlot()->graphCount(), 0);
        QVERIFY(view.benchmarkMessage().contains("/nonexistent/attention-sweep.json"));
        QVERIFY(!view.grab().isNull());
    }

    void missingTensorsAreAMessage()
    {
        KernelCompareView view;
        view.setSpec(kernels(0, 0));
        view.setInput(testing::analyzed(ViewInput {}, kernels(0, 0)));
        QCOMPARE(view.panelCount(), 0);
        QCOMPARE(view.message(), QString::fromUtf8(kNothingComputed));
    }
};

QTEST_MAIN(TestKernelCompareView)
#include "tst_kernelcompareview.moc"
