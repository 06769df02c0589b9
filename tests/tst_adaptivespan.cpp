// Adaptive attention span (Sukhbaatar et al. 2019; src/core/ops/adaptivespan.cpp): the soft mask and the weights
// against a PyTorch reference written from the paper (tests/tools/make_span_reference.py), with autograd's gradients
// for the scores and the spans; exact zeros beyond z + R; each span's gradient in a whole model against central
// differences of the loss and its penalty, for the engine and for the checkpointing runner; the KV-cache generator
// agreeing with the program; the trainer keeping the spans in range; and the config's refusals.

#include "engine/engine.h"
#include "engine/generator.h"
#include "errortesting.h"
#include "generatortesting.h"
#include "io/npy.h"
#include "ops/ops.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "train/backprop.h"
#include "train/strategyrunner.h"
#include "train/trainer.h"

#include "referencetesting.h"

#include <QTest>

#include <cmath>

using namespace atlas;
using namespace atlas::testing;
using testing::errorFrom;

namespace {

Tensor loadSpan(const char *name)
{
    return readNpy(std::string(ATLAS_TEST_DATA "/span/") + name + ".npy");
}

ModelConfig spanConfig(float penalty)
{
    ModelConfig c = ModelConfig::fromJson(R"({"n_layer": 2, "n_head": 4, "n_embd": 32, "vocab_size": 256,
        "n_positions": 24, "atlas_tokenizer": "bytes", "atlas_span_ramp": 4})",
        "span.json");
    c.spanPenalty = penalty;
    return c;
}

// Spans from 1.3 to 10.75 tokens, none a whole number (the mask has a corner there), and scores large enough for the
// mask to matter.
std::shared_ptr<Model> spanModel(float penalty)
{
    auto model = std::make_shared<Model>(Model::random(spanConfig(penalty), 3));
    for (size_t l = 0; l < model->blocks.size(); ++l) {
        BlockWeights &b = model->blocks[l];
        for (int h = 0; h < 4; ++h)
            b.weight(BlockPart::SpanFraction).data()[h] = (1.3f + 3.0f * float(h) + 0.45f * float(l)) / 24.0f;
        b.weight(BlockPart::Qkv).matrix() *= 20.0f;
    }
    return model;
}

Input spanInput()
{
    Input input;
    for (int t = 0; t < 20; ++t)
        input.tokens.push_back((11 * t + 5) % 256);
    return input;
}

std::vector<int> nextTokens(const Input &input)
{
    std::vector<int> targets(input.tokens.begin() + 1, input.tokens.end());
    targets.push_back(-1);
    return targets;
}

} // namespace

class TestAdaptiveSpan : public QObject
{
    Q_OBJECT

private slots:
    void maskAndWeightsMatchThePaper();
    void backwardMatchesAutograd();
    void keysBeyondTheSpanGetExactlyZero();
    void spanGradientsMatchFiniteDifferences();
    void checkpointingGivesTheSameGradients();
    void generatorAgreesWithTheProgram();
    void trainerKeepsSpansInRange();
    void configRefusesWhatItCannotRun();
};

void TestAdaptiveSpan::maskAndWeightsMatchThePaper()
{
    const Tensor scores = loadSpan("scores");
    const float ramp = loadSpan("ramp").data()[0];
    Tensor mask(scores.shape()), probs(scores.shape());
    ops::span_mask_forward(mask, values(loadSpan("spans")), ramp);
    QString why = testing::compareToReference("mask", mask, loadSpan("mask"), 1e-6);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    ops::span_softmax_forward(probs, scores, mask);
    why = testing::compareToReference("probs", probs, loadSpan("probs"), 1e-5);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    // The paper's definition by hand: z = 2.7, R = 3 at distances 0, 3, 5 and 6.
    QCOMPARE(ops::span_ramp_value(2.7f, 3.0f, 0), 1.0f);
    QCOMPARE(ops::span_ramp_value(2.7f, 3.0f, 3), (3.0f + 2.7f - 3.0f) / 3.0f);
    QCOMPARE(ops::span_ramp_value(2.7f, 3.0f, 5), (3.0f + 2.7f - 5.0f) / 3.0f);
    QCOMPARE(ops::span_ramp_value(2.7f, 3.0f, 6), 0.0f);
}

void TestAdaptiveSpan::backwardMatchesAutograd()
{
    const Tensor scores = loadSpan("scores"), mask = loadSpan("mask");
    Tensor probs(scores.shape()), dscores(scores.shape());
    ops::span_softmax_forward(probs, scores, mask);
    std::vector<float> dspans(size_t(scores.dim(0)), 0.0f);
    ops::span_softmax_backward(dscores, dspans, loadSpan("dout"), probs, mask, loadSpan("ramp").data()[0]);
    QString why = testing::compareToReference("dscores", dscores, loadSpan("dscores"), 1e-5);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    Tensor dz({int64_t(dspans.size())});
    std::copy(dspans.begin(), dspans.end(), dz.data());
    why = testing::compareToReference("dspans", dz, loadSpan("dspans"), 1e-5);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestAdaptiveSpan::keysBeyondTheSpanGetExactlyZero()
{
    auto model = spanModel(0.0f);
    Engine engine(model, spanInput());
    engine.runToEnd();
    int zeros = 0;
    for (int layer = 0; layer < 2; ++layer) {
        const std::string p = "layer." + std::to_string(layer) + ".";
        const Tensor &probs = engine.trace().tensor(p + "attn.probs"), &z = engine.trace().tensor(p + "attn.span");
        const std::vector<float> spans = model->attentionSpans(layer);
        for (int h = 0; h < 4; ++h) {
            QCOMPARE(z.data()[h], spans[size_t(h)]);
            for (int i = 0; i < 20; ++i) {
                double sum = 0;
                for (int j = 0; j <= i; ++j) {
                    const float a = probs.slice(h)(i, j);
                    sum += a;
                    if (float(i - j) >= spans[size_t(h)] + 4.0f) {
                        QCOMPARE(a, 0.0f);
                        ++zeros;
                    } else {
                        QVERIFY(a > 0.0f);
                    }
                }
                QVERIFY(std::fabs(sum - 1.0) < 1e-5);
            }
        }
    }
    QVERIFY2(zeros > 300, qPrintable(QString("%1 keys beyond a span").arg(zeros)));
}

// ∂(loss + penalty)/∂v for every head's span fraction v, against (L(v + h) − L(v − h)) / 2h with the model run again.
void TestAdaptiveSpan::spanGradientsMatchFiniteDifferences()
{
    const float penalty = 0.05f;
    auto model = spanModel(penalty);
    const Input input = spanInput();
    const std::vector<int> targets = nextTokens(input);
    Engine engine(model, input);
    engine.runToEnd();
    const Gradients g = backward(*model, input, engine.trace(), targets);
    double spanSum = 0;
    for (int layer = 0; layer < 2; ++layer)
        for (float z : model->attentionSpans(layer))
            spanSum += z / 4.0;
    QVERIFY(std::fabs(g.spanLoss - penalty * spanSum) < 1e-4);
    const auto objective = [&](int layer, int head, float v) {
        Model m = *model;
        m.blocks[size_t(layer)].weight(BlockPart::SpanFraction).data()[head] = v;
        double spans = 0;
        for (int l = 0; l < 2; ++l)
            for (float z : m.attentionSpans(l))
                spans += z / 4.0;
        Engine e(std::make_shared<Model>(std::move(m)), input);
        e.runToEnd();
        Tensor losses({int64_t(targets.size())});
        return double(ops::crossentropy_forward(losses, e.trace().tensor("logits"), targets)) + penalty * spans;
    };
    for (int layer = 0; layer < 2; ++layer) {
        const Tensor &grad = g.grads.at("h." + std::to_string(layer) + ".attn.span_fraction");
        for (int h = 0; h < 4; ++h) {
            const float v = model->blocks[size_t(layer)].weight(BlockPart::SpanFraction).data()[h],
                        step = 0.02f / 24.0f; // 0.02 tokens: the
            // scores are large and the loss curves within a tenth of a token
            const double numeric = (objective(layer, h, v + step) - objective(layer, h, v - step)) / (2.0 * step);
            QVERIFY2(std::fabs(numeric - grad.data()[h]) <= 2e-3 + 3e-2 * std::fabs(numeric),
                qPrintable(QString("layer %1 head %2: analytic %3, numeric %4")
                               .arg(layer)
                               .arg(h)
                               .arg(grad.data()[h])
                               .arg(numeric)));
        }
    }
}

void TestAdaptiveSpan::checkpointingGivesTheSameGradients()
{
    auto model = spanModel(0.05f);
    const Input input = spanInput();
    const std::vector<int> targets = nextTokens(input);
    Engine engine(model, input);
    engine.runToEnd();
    const Gradients plain = backward(*model, input, engine.trace(), targets);
    MemoryOptions checkpoint;
    checkpoint.strategy = MemoryStrategy::Checkpoint;
    StrategyRunner runner(*model, input, checkpoint);
    runner.forward();
    Gradients got;
    runner.backward(targets, got);
    for (const auto &[name, want] : plain.grads) {
        const QString why = testing::compareToReference(QString::fromStdString(name), got.grads.at(name), want, 1e-5);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
    QCOMPARE(got.spanLoss, plain.spanLoss);
}

void TestAdaptiveSpan::generatorAgreesWithTheProgram()
{
    std::shared_ptr<const Model> model = spanModel(0.0f);
    const QString why = testing::cachedLogitsAgainstProgram(model, {3, 17, 42}, 15);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestAdaptiveSpan::trainerKeepsSpansInRange()
{
    TrainOptions o;
    o.steps = 3;
    o.batch = 2;
    o.learningRate = 0.5f; // a step far past 0
    o.warmupSteps = 0;
    ModelConfig c = spanConfig(100.0f);
    c.context = 64;
    auto shrinking = std::make_shared<Model>(Model::random(c, 1));
    for (BlockWeights &b : shrinking->blocks)
        b.weight(BlockPart::SpanFraction).values().assign(4, 0.01f);
    Trainer trainer(shrinking, "copy", o);
    const StepReport r = trainer.step();
    QVERIFY(r.spanLoss > 0);
    for (const BlockWeights &b : shrinking->blocks)
        for (float v : b.weight(BlockPart::SpanFraction).values())
            QCOMPARE(v, 0.0f); // pushed below 0 by the penalty, clamped back
}

void TestAdaptiveSpan::configRefusesWhatItCannotRun()
{
    const auto refusal = [](const char *extra) {
        return errorFrom([&] {
            ModelConfig::fromJson(std::string(R"({"n_layer": 1, "n_head": 2, "n_embd": 8, "vocab_size": 256,
                "n_positions": 16, "atlas_tokenizer": "bytes", "atlas_span_ramp": 4)")
                    + extra + "}",
                "span.json");
        });
    };
    QVERIFY(refusal("").isEmpty());
    QVERIFY2(refusal(R"(, "atlas_attention_normaliser": "sparsemax")").contains("atlas_span_ramp"),
        qPrintable(refusal(R"(, "atlas_attention_normaliser": "sparsemax")")));
    QVERIFY(refusal(R"(, "atlas_causal": false, "atlas_architecture": "encoder")").contains("causal decoder"));
    QVERIFY(refusal(R"(, "atlas_span_penalty": -1)").contains("atlas_span_penalty"));
    const QString huge = errorFrom([] {
        ModelConfig::fromJson(R"({"n_layer": 1, "n_head": 2, "n_embd": 8, "vocab_size": 256, "n_positions": 16,
            "atlas_span_ramp": 100000})",
            "span.json");
    });
    QVERIFY2(huge.contains("span.json") && huge.contains("atlas_span_ramp"), qPrintable(huge));
    const ModelConfig c = spanConfig(0.25f); // the keys go out and come back
    const ModelConfig back = ModelConfig::fromJson(c.toJson(), "back.json");
    QCOMPARE(back.spanRamp, 4);
    QCOMPARE(back.spanPenalty, 0.25f);
}

QTEST_GUILESS_MAIN(TestAdaptiveSpan)
#include "tst_adaptivespan.moc"
