// Gemma 2's soft-cap c·tanh(s/c) as the views show it, on gemma2_tiny (attn_logit_softcapping 1.5): the Neuron view
// divides by the model's own √query_pre_attn_scalar and draws the cap's curve with the pair on it; the Mask view gives
// a score on both sides of the cap under the mouse and draws the cap with the head's every score.
#include "mask/maskview.h"
#include "neuron/neuron.h"
#include "neuron/neuronview.h"
#include "testbundle.h"
#include "trace/trace.h"
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
        s.set(views::neuron::kKey, 5);
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

    // A fourth panel draws the cap c·tanh(s/c) with every score of the head on it (8 × 8 here, all drawn), and the
    // caption counts the scores the cap moved by more than a tenth; a model without a cap has no such panel.
    void maskViewDrawsTheCapWithTheHeadsScores()
    {
        const ViewSpec s = gemma2Spec("mask");
        MaskView view;
        view.resize(1400, 560);
        const ViewInput input = testing::forSpec(s);
        view.setInput(input);
        view.setSpec(s);
        QVERIFY(!view.capPlot()->isHidden());
        const Tensor &scores = input.trace->tensor("layer.0.attn.scores"),
                     &capped = input.trace->tensor("layer.0.attn.capped");
        const auto *points = qobject_cast<QCPGraph *>(view.capPlot()->plottable(0));
        QVERIFY(points && points->dataCount() == 64);
        int squashed = 0;
        for (int64_t i = 0; i < 64; ++i) {
            const float sc = scores.slice(1).data()[i], cc = capped.slice(1).data()[i];
            squashed += std::fabs(sc - cc) > std::fabs(sc) / 10 ? 1 : 0;
        }
        const double cap = input.model->config.attentionSoftcap;
        for (int i = 0; i < points->dataCount(); ++i) { // each point (s, c·tanh(s/c)), sorted by s
            const auto p = points->data()->at(i);
            QVERIFY(std::fabs(p->value - cap * std::tanh(p->key / cap)) < 1e-5);
        }
        QVERIFY(squashed > 0); // c = 1.5: the scores of this random model reach past it
        QVERIFY2(view.caption()->text().contains(QString("The cap moved %1 of this head's scores").arg(squashed)),
            qPrintable(view.caption()->text()));

        ViewSpec plain = s;
        plain.model = ATLAS_TEST_DATA "/qwen3_tiny";
        view.setInput(testing::forSpec(plain));
        view.setSpec(plain);
        QVERIFY(view.capPlot()->isHidden());
        QVERIFY(!view.caption()->text().contains("cap"));
    }

    // A head past HeatmapPlot::kPoolOnWorkerCells kept on demand: the cap's panel reads its scores a few dozen rows at
    // a time (on a worker when shown, at once headless), never the 2100² head whole, and draws what the whole trace's
    // head draws: the same points and, to rounding at the tenth's edge, the same count.
    void theCapOfALargeHeadOnDemandIsTheWholeHeads()
    {
        ViewSpec spec = gemma2Spec("mask");
        spec.tokens.clear();
        for (int t = 0; t < 2100; ++t)
            spec.tokens.push_back(3 + (t * 7) % 50);
        spec.layer = 1;
        const SpecRun onDemandRun = runSpec(spec, size_t(64) << 20), wholeRun = runSpec(spec, size_t(8) << 30);
        QVERIFY(!onDemandRun.trace->contains("layer.1.attn.scores") && wholeRun.trace->contains("layer.1.attn.scores"));
        MaskView whole, onDemand;
        whole.resize(1400, 560);
        onDemand.resize(1400, 560);
        whole.setInputAndSpec(makeViewInput(wholeRun), spec);
        onDemand.setInputAndSpec(makeViewInput(onDemandRun), spec);
        QWidget window;
        auto *shown = new MaskView(&window);
        window.resize(1400, 560);
        shown->resize(1400, 560);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        shown->setInputAndSpec(makeViewInput(onDemandRun), spec);
        QVERIFY(shown->drawing());
        QVERIFY(shown->caption()->text().contains("Reading the head's scores"));
        QTRY_VERIFY_WITH_TIMEOUT(!shown->drawing(), 20000);
        const auto count = [](const MaskView &view) {
            const QString text = view.caption()->text();
            const qsizetype at = text.indexOf("The cap moved ");
            return at < 0 ? -1 : text.mid(at + 14).section(' ', 0, 0).toInt();
        };
        QVERIFY(count(whole) > 0);
        for (const MaskView *view : {&onDemand, shown}) {
            QVERIFY2(std::abs(count(*view) - count(whole)) <= 1 + count(whole) / 1000,
                qPrintable(QString("%1 against %2").arg(count(*view)).arg(count(whole))));
            const auto *a = qobject_cast<QCPGraph *>(whole.capPlot()->plottable(0));
            const auto *b = qobject_cast<QCPGraph *>(view->capPlot()->plottable(0));
            QVERIFY(a && b && a->dataCount() > 1000);
            QCOMPARE(b->dataCount(), a->dataCount());
            for (int i = 0; i < a->dataCount(); ++i) {
                const auto p = a->data()->at(i), q = b->data()->at(i);
                QVERIFY(std::abs(p->key - q->key) <= 1e-5 * (1 + std::abs(p->key)));
                QVERIFY(std::abs(p->value - q->value) <= 1e-5 * (1 + std::abs(p->value)));
            }
        }
    }
};

QTEST_MAIN(TestSoftcapViews)
#include "tst_softcapviews.moc"
