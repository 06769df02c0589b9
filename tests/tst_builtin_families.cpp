// The built-in models trained in other families' layouts are what their descriptions (config.json, docs/models.md)
// and lessons 15, 24 and 25 say: reverse-llama's grouped-query attention and cache, reverse-qwen3's QK-norm and the
// ceiling it puts on the scores, reverse-gemma2's sandwich, soft-caps and local layer.
#include "analysis/headpatterns.h"
#include "engine/engine.h"
#include "engine/generator.h"
#include "model/builtinmodels.h"
#include "qknorm/qknormeffect.h"
#include "testbundle.h"
#include "train/task.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace atlas;

class TestBuiltinFamilies : public QObject
{
    Q_OBJECT

private slots:
    // reverse-llama is what its description says: the Llama layout, 4 query heads on 2 K/V heads, SwiGLU 176 wide,
    // an untied head; and what lesson 15 counts: its K/V cache is half of one K/V head per query head.
    void reverseLlamaIsALlamaWithGroupedQueryAttention()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse-llama");
        const ModelConfig &c = m->config;
        QCOMPARE(QString::fromStdString(c.modelType), QString("llama"));
        QCOMPARE(c.heads, 4);
        QCOMPARE(c.kvHeadCount(), 2);
        QCOMPARE(c.dFF, 176);
        QVERIFY(c.norm == NormKind::RmsNorm && c.gatedFfn && !c.tiedHead && c.positions == PositionKind::RopeHalf);
        QCOMPARE(m->blocks[0].weight(BlockPart::K).shape(), (Shape {32, 64}));
        Generator g(m, {'a', 'b', 'c', 'd', '>'});
        QCOMPARE(g.cacheBytes(), size_t(2 * 2 * 5 * 2 * 16 * 4)); // K and V, 2 layers, 5 positions, 2 heads of 16
        // Lesson 15: it shares the copying out; the best head of layer 1 at each answer position puts about half its
        // attention on the mirrored letter (52 %), where `reverse`'s layer 0 reaches 96 %.
        const auto task = Task::create("reverse");
        int checked = 0;
        for (const HeadPattern &p : headPatterns("reverse"))
            if (p.name == "mirror") {
                ++checked;
                const double llama = patternCoverage(m, *task, p, 1, 100);
                QVERIFY2(llama >= 0.50 && llama <= 0.55, qPrintable(QString::number(llama)));
                const double gpt2 = patternCoverage(loadModel("reverse"), *task, p, 0, 100);
                QVERIFY2(gpt2 >= 0.95, qPrintable(QString::number(gpt2)));
            }
        QCOMPARE(checked, 1);
    }

    // reverse-qwen3 is reverse-llama's shape with Qwen3's per-head QK-norm; what docs/models.md and lesson 24 say of
    // its scores on "dsfacdd>ddcafsd": γ caps them at ±11.6 (layer 0) and ±19.1 (layer 1), layer 0's heads reach 9 to
    // 10.5, and reverse-llama's layer-1 head 0, with no cap, goes past −40 and +35.
    void reverseQwen3HasQkNormAndItsScoresStayUnderTheCap()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse-qwen3");
        const ModelConfig &c = m->config;
        QCOMPARE(QString::fromStdString(c.modelType), QString("qwen3"));
        QVERIFY(c.qkNorm == QkNorm::Heads && c.gatedFfn && !c.tiedHead && c.positions == PositionKind::RopeHalf);
        QCOMPARE(c.heads, 4);
        QCOMPARE(c.kvHeadCount(), 2);
        const std::vector<int> question = {'d', 's', 'f', 'a', 'c', 'd', 'd', '>', 'd', 'd', 'c', 'a', 'f', 's', 'd'};
        const auto effectOf = [&](const std::shared_ptr<const Model> &model, int layer) {
            Engine e(model, Input {question, {}, {}});
            e.runToEnd();
            return qkNormEffect(*model, e.trace(), layer);
        };
        const double caps[2] = {11.6, 19.1};
        for (int layer = 0; layer < 2; ++layer)
            for (const QkNormHead &h : effectOf(m, layer).heads) {
                QVERIFY2(std::fabs(h.weightBound - caps[layer]) < 0.05, qPrintable(QString::number(h.weightBound)));
                const double reach = std::max(std::fabs(h.lowest), std::fabs(h.highest));
                QVERIFY(reach <= h.weightBound);
                if (layer == 0)
                    QVERIFY2(reach >= 9.0 && reach <= 10.5, qPrintable(QString::number(reach)));
            }
        const QkNormHead llama = effectOf(loadModel("reverse-llama"), 1).heads[0];
        QVERIFY2(llama.lowest < -40 && llama.highest > 35 && llama.weightBound == 0,
            qPrintable(QString("%1 %2").arg(llama.lowest).arg(llama.highest)));
    }

    // reverse-gemma2 is what its description and lesson 25 say: Gemma 2's sandwich of (1 + γ) norms, GeGLU, a tied
    // head, layer 0 local (16 keys) and layer 1 global; on "dsfacdd>ddcafsd" layer 0's scores go past ±35, where the
    // cap 50·tanh(s/50) takes off more than a tenth, and the largest logit passes 20 before its cap 30·tanh(z/30).
    void reverseGemma2SoftCapsItsScoresAndLogits()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse-gemma2");
        const ModelConfig &c = m->config;
        QCOMPARE(QString::fromStdString(c.modelType), QString("gemma2"));
        QVERIFY(c.layerNorm == LayerNormPlacement::Sandwich && c.normAddsOne && c.tiedHead && c.gatedFfn);
        QVERIFY(c.activation == Activation::GeluTanh);
        QCOMPARE(c.attentionSoftcap, 50.0f);
        QCOMPARE(c.logitSoftcap, 30.0f);
        QVERIFY(c.windowed(0) && !c.windowed(1));
        QCOMPARE(c.slidingWindow, 16);
        const std::vector<int> question = {'d', 's', 'f', 'a', 'c', 'd', 'd', '>', 'd', 'd', 'c', 'a', 'f', 's', 'd'};
        Engine e(m, Input {question, {}, {}});
        e.runToEnd();
        const Tensor &scores = e.trace().tensor("layer.0.attn.scores"),
                     &capped = e.trace().tensor("layer.0.attn.capped");
        float widest = 0;
        for (int64_t i = 0; i < scores.numel(); ++i) {
            const float s = scores.data()[i];
            QVERIFY(std::fabs(capped.data()[i] - 50.0f * std::tanh(s / 50.0f)) <= 1e-4f * 50.0f);
            widest = std::max(widest, std::fabs(s));
        }
        QVERIFY2(widest > 35.0f, qPrintable(QString::number(widest)));
        const Tensor &raw = e.trace().tensor("head.logits");
        const float largest = *std::max_element(raw.data(), raw.data() + raw.numel());
        QVERIFY2(largest > 20.0f, qPrintable(QString::number(largest)));
        const Tensor &logits = e.trace().tensor("logits");
        for (int64_t i = 0; i < raw.numel(); ++i)
            QVERIFY(std::fabs(logits.data()[i] - 30.0f * std::tanh(raw.data()[i] / 30.0f)) <= 1e-4f * 30.0f);
    }

    // reverse-gpt-oss is what its description and lesson 25 say: gpt-oss's sinks, biases, window and stacked experts;
    // on "dsfacdd>ddcafsd" layer 1's heads 2 and 3 give at least 98 % of every row up to the '>' to their sink (the
    // trained model gives 0.9898 and more), and the rows that read the answer's first letters (8, 10, 11) less than 1
    // %.
    void reverseGptOssParksHeadsOnItsSink()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse-gpt-oss");
        const ModelConfig &c = m->config;
        QCOMPARE(QString::fromStdString(c.modelType), QString("gpt_oss"));
        QVERIFY(c.attentionSinks && c.stacksExperts() && c.droplessRouting && c.qkvBias && c.outBias);
        QCOMPARE(c.experts, 4);
        QCOMPARE(c.expertTopK, 2);
        QVERIFY(c.windowed(0) && !c.windowed(1));
        const std::vector<int> question = {'d', 's', 'f', 'a', 'c', 'd', 'd', '>', 'd', 'd', 'c', 'a', 'f', 's', 'd'};
        Engine e(m, Input {question, {}, {}});
        e.runToEnd();
        const Tensor &sink = e.trace().tensor("layer.1.attn.sink");
        for (const int head : {2, 3}) {
            for (int row = 0; row <= 7; ++row)
                QVERIFY2(sink.matrix()(head, row) >= 0.98f,
                    qPrintable(QString("head %1 row %2: %3").arg(head).arg(row).arg(sink.matrix()(head, row))));
            for (const int row : {8, 10, 11})
                QVERIFY2(sink.matrix()(head, row) < 0.01f,
                    qPrintable(QString("head %1 row %2: %3").arg(head).arg(row).arg(sink.matrix()(head, row))));
        }
    }

    // reverse-smollm3 is what lesson 25 says: SmolLM3's layout with layer 3 NoPE. On "dsfacdd>ddcafsd" the rows that
    // read the answer (after the '>') put their weight on one key in layer 1, which turns q and k (the trained model:
    // at least 0.97 of a row on average, every head), and spread it in layer 3, which does not (at most 0.59).
    void reverseSmolLM3SpreadsItsNoPeLayer()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse-smollm3");
        const ModelConfig &c = m->config;
        QCOMPARE(QString::fromStdString(c.modelType), QString("smollm3"));
        QCOMPARE(c.layers, 4);
        QCOMPARE(c.noRopeLayers, std::vector<int> {3});
        const std::vector<int> question = {'d', 's', 'f', 'a', 'c', 'd', 'd', '>', 'd', 'd', 'c', 'a', 'f', 's', 'd'};
        Engine e(m, Input {question, {}, {}});
        e.runToEnd();
        const auto meanLargest = [&](int layer, int head) { // the mean of each answer row's largest weight
            const Tensor &p = e.trace().tensor("layer." + std::to_string(layer) + ".attn.probs");
            const int64_t T = p.dim(1);
            double sum = 0;
            for (int64_t row = 8; row < T; ++row)
                sum += *std::max_element(p.slice(head).data() + row * T, p.slice(head).data() + (row + 1) * T);
            return sum / double(T - 8);
        };
        for (int head = 0; head < 4; ++head) {
            QVERIFY2(meanLargest(1, head) > 0.9,
                qPrintable(QString("layer 1 head %1: %2").arg(head).arg(meanLargest(1, head))));
            QVERIFY2(meanLargest(3, head) < 0.75,
                qPrintable(QString("layer 3 head %1: %2").arg(head).arg(meanLargest(3, head))));
        }
    }
};

QTEST_GUILESS_MAIN(TestBuiltinFamilies)
#include "tst_builtin_families.moc"
