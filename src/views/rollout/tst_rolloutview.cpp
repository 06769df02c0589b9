// The Rollout view (src/views/rollout): attention rollout and flow drawn from their analysis.
#include "rollout/rollout.h"
#include "rollout/rolloutview.h"
#include "testbundle.h"
#include "views/heatmapplot.h"
#include "viewtesting.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>

using namespace atlas;

class TestRolloutView : public QObject
{
    Q_OBJECT

private slots:
    // Rollout and flow: the map is the rollout of every position, the bars of the spec's position are the last
    // layer's combined attention, that row of the map and the normalised flow; max fusion is another rollout; an
    // encoder-decoder's cross-attention is refused with the sites that work.
    void rolloutDrawsTheMapAndThePositionsBars()
    {
        ViewSpec spec;
        spec.view = "rollout";
        spec.model = "reverse";
        spec.text = "abcdefgh>hgfedcba";
        spec.position = 12;
        const ViewInput input = testing::forSpec(spec);
        RolloutView view;
        view.resize(1200, 700);
        view.setSpec(spec);
        view.setInput(input);
        QVERIFY2(view.message().isEmpty(), qPrintable(view.message()));
        const auto *a = input.analysisAs<RolloutAnalysis>();
        QVERIFY(a);
        const int T = int(input.tokens.size());
        QCOMPARE(view.rolloutPlot()->matrixRows(), T);
        QCOMPARE(view.rolloutPlot()->markedRow(), 12);
        double flowSum = 0;
        for (int j = 0; j < T; ++j) {
            QVERIFY(std::abs(view.bars(1)->data()->at(j)->value - a->rollout(12, j)) < 1e-12);
            flowSum += view.bars(2)->data()->at(j)->value;
            if (j > 12) // causal: nothing reaches position 12 from later tokens
                QCOMPARE(view.bars(1)->data()->at(j)->value, 0.0);
        }
        QVERIFY(std::abs(flowSum - 1) < 1e-9);
        double lastSum = 0;
        for (int j = 0; j < T; ++j)
            lastSum += view.bars(0)->data()->at(j)->value;
        QVERIFY(std::abs(lastSum - 1) < 1e-6); // the heads' mean attention of one row
        QVERIFY(view.caption().contains("normalised"));

        ViewSpec max = spec;
        max.set(views::rollout::kRolloutHeads, "max");
        const ViewInput maxInput = testing::forSpec(max);
        view.setSpec(max);
        view.setInput(maxInput);
        QVERIFY(view.message().isEmpty());
        QVERIFY(maxInput.analysisAs<RolloutAnalysis>()->rollout.isApprox(a->rollout) == false);

        ViewSpec cross;
        cross.view = "rollout";
        cross.model = "seq2seq-sort";
        cross.text = "dbca";
        cross.decoderText = "abcd";
        cross.site = "cross";
        view.setSpec(cross);
        view.setInput(testing::forSpec(cross));
        QVERIFY2(view.message().contains("Encoder or Decoder self-attention"), qPrintable(view.message()));
    }

    // A run kept on demand: each layer's heads recomputed from its queries, keys and log-sum-exp give the same
    // rollout and flow as the whole matrices, with sinks (gpt-oss) and a window and soft-cap (Gemma 2).
    void rolloutReadsLayersKeptOnDemand()
    {
        for (const char *model : {"gpt_oss_tiny", "gemma2_tiny", "llama_tiny"})
            for (const char *fusion : {"mean", "max"}) {
                ViewSpec spec;
                spec.view = "rollout";
                spec.model = QString(ATLAS_TEST_DATA "/%1").arg(model).toStdString();
                spec.tokens = {3, 17, 42, 8, 0, 25, 9, 11};
                spec.position = 6;
                spec.set(views::rollout::kRolloutHeads, fusion);
                const ViewInput whole = testing::forSpec(spec);
                const SpecRun run = runSpec(spec, whole.program->tracedBytes() - 1);
                QVERIFY2(run.trace->contains("layer.1.attn.lse") && !run.trace->contains("layer.1.attn.probs"), model);
                const ViewInput onDemand = testing::analyzed(makeViewInput(run), spec);
                const auto *a = whole.analysisAs<RolloutAnalysis>(), *b = onDemand.analysisAs<RolloutAnalysis>();
                QVERIFY2(a && b, model);
                QCOMPARE(b->layers, a->layers);
                QVERIFY2((a->rollout - b->rollout).cwiseAbs().maxCoeff() < 1e-6, model);
                QCOMPARE(b->flow.normalised.size(), a->flow.normalised.size());
                QVERIFY(!a->flow.normalised.empty());
                for (size_t j = 0; j < a->flow.normalised.size(); ++j)
                    QVERIFY2(std::abs(a->flow.normalised[j] - b->flow.normalised[j]) < 1e-6, model);
                for (size_t j = 0; j < a->lastLayer.size(); ++j)
                    QVERIFY2(std::abs(a->lastLayer[j] - b->lastLayer[j]) < 1e-6, model);
            }
    }
};

QTEST_MAIN(TestRolloutView)
#include "tst_rolloutview.moc"
