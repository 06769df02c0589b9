// Gemma 2's soft-cap c·tanh(s/c) as the views show it, on gemma2_tiny (attn_logit_softcapping 1.5): the Neuron view
// divides by the model's own √query_pre_attn_scalar and draws the cap's curve with the pair on it; the Mask view gives
// a score on both sides of the cap under the mouse.
#include "testbundle.h"
#include "views/maskview.h"
#include "views/neuronview.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QTest>

#include <cmath>

using namespace atlas;

namespace {

// View `kind` on gemma2_tiny's reference tokens, layer 0, head 1.
ViewSpec gemma2Spec(const std::string &kind)
{
    ViewSpec s;
    s.view = kind;
    s.model = ATLAS_TEST_DATA "/gemma2_tiny";
    s.tokens = {3, 17, 42, 8, 0, 25, 63, 11};
    s.layer = 0;
    s.head = 1;
    return s;
}

} // namespace

class TestSoftcapViews : public QObject
{
    Q_OBJECT

private slots:
    // The scores divide by √query_pre_attn_scalar, the caption gives the capped score, and a fourth panel draws the
    // cap's curve with this pair on it.
    void neuronViewShowsTheSoftcap()
    {
        ViewSpec s = gemma2Spec("neuron");
        s.query = 7;
        s.key = 5;
        NeuronView view;
        view.resize(1200, 700);
        view.setInput(testing::forSpec(s));
        view.setSpec(s);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const QueryKeyTerms &t = view.terms();
        QVERIFY(t.capped);
        QVERIFY2(view.formula().contains("/ √10"), qPrintable(view.formula()));
        QVERIFY2(view.caption().contains("soft-capped to c·tanh(s/c) = " + formatNumber(t.cappedScore, 4)),
            qPrintable(view.caption()));
        QCOMPARE(view.plot()->axisRectCount(), 4);
        const auto *point = qobject_cast<QCPGraph *>(view.plot()->plottable(view.plot()->plottableCount() - 1));
        QVERIFY(point && point->dataCount() == 1);
        QCOMPARE(point->data()->at(0)->key, t.score);
        QCOMPARE(point->data()->at(0)->value, t.cappedScore);
    }

    // A score cell's hover gives the score before and after the cap, c·tanh(s/c).
    void maskViewHoverGivesBothSidesOfTheCap()
    {
        const ViewSpec s = gemma2Spec("mask");
        MaskView view;
        view.resize(1200, 560);
        const ViewInput input = testing::forSpec(s);
        view.setInput(input);
        view.setSpec(s);
        const float score = input.trace->tensor("layer.0.attn.scores").slice(1)(7, 5),
                    capped = input.trace->tensor("layer.0.attn.capped").slice(1)(7, 5);
        const float cap = input.model->config.attentionSoftcap;
        QVERIFY(std::fabs(capped - cap * std::tanh(score / cap)) < 1e-5f);
        view.scoresPlot()->replot(QCustomPlot::rpImmediateRefresh);
        const QString text = view.scoresPlot()->hoverTextAt(view.scoresPlot()->cellCenter(7, 5));
        QVERIFY2(
            text.contains("score " + formatNumber(score) + " → soft-capped " + formatNumber(capped)), qPrintable(text));
    }
};

QTEST_MAIN(TestSoftcapViews)
#include "tst_softcapviews.moc"
