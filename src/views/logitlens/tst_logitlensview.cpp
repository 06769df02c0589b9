// The Logit lens view (src/views/logitlens) as a researcher reads it: the grid (the output on top, the embedding at
// the bottom), each cell's most probable token written in it and equal to the model's own prediction on the top row,
// a tracked target's probabilities, the rows so far while stepping, and a target the tokenizer cannot read as one
// token refused with its key.
#include "logitlens/logitlens.h"
#include "logitlens/logitlensview.h"
#include "testbundle.h"
#include "views/heatmapplot.h"
#include "viewshowing.h"
#include "viewtesting.h"

#include <qcustomplot.h>

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

class TestLogitLensView : public QObject
{
    Q_OBJECT

private slots:
    void theLensWritesWhatEachStreamPredicts()
    {
        const ViewSpec spec = lensSpec();
        const ViewInput input = testing::forSpec(spec);
        LogitLensView view;
        QVERIFY(testing::shown(view, spec, input, {1200, 700}));
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
        QVERIFY(testing::shown(view, spec, input, {1200, 700}));
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
};

QTEST_MAIN(TestLogitLensView)
#include "tst_logitlensview.moc"
