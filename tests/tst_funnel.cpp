// Funnel-Transformer (Dai et al. 2020; src/core/model/funnel.h): the layout's strides, the pooling and upsampling ops
// against literal examples, the engine (which masks the positions no longer present) against a PyTorch forward that
// shortens the sequence for real, gradients included (tests/tools/make_funnel_reference.py), and the refusals.

#include "analysis/earlyexit.h"
#include "analysis/logitlens.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "io/npy.h"
#include "ops/ops.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "train/backprop.h"
#include "train/strategyrunner.h"
#include "train/trainingsetup.h"

#include "referencetesting.h"

#include <QTest>

using namespace atlas;
using namespace atlas::testing;
using testing::errorFrom;

namespace {

const QString kFunnelRef = QStringLiteral(ATLAS_TEST_DATA "/funnel/tiny_ref/");

Tensor funnelReference(const QString &name)
{
    return readNpy((kFunnelRef + name + ".npy").toStdString());
}

std::vector<int> present(int T, int stride)
{
    std::vector<int> rows;
    for (int t = 0; t < T; t += stride)
        rows.push_back(t);
    return rows;
}

// probs [H, T, T] at the given query rows and key columns: [H, rows, cols].
Tensor attentionAt(const Tensor &probs, const std::vector<int> &rows, const std::vector<int> &cols)
{
    const int64_t H = probs.dim(0);
    Tensor out({H, int64_t(rows.size()), int64_t(cols.size())});
    for (int64_t h = 0; h < H; ++h)
        for (size_t r = 0; r < rows.size(); ++r)
            for (size_t c = 0; c < cols.size(); ++c)
                out.slice(h)(int64_t(r), int64_t(c)) = probs.slice(h)(rows[r], cols[c]);
    return out;
}

} // namespace

class TestFunnel : public QObject
{
    Q_OBJECT

private slots:
    // Groups {2, 1, 1} and one decoder layer: strides 1 1 2 4 1; layers 2 and 3 pool; layer 4 upsamples and reads the
    // output of layer 1, the first group's last.
    void layoutStrides()
    {
        const FunnelLayout f {{2, 1, 1}, 1};
        QCOMPARE(f.encoderLayers(), 4);
        const std::vector<int> strides = {1, 1, 2, 4, 1}, keyStrides = {1, 1, 1, 2, 1};
        for (int l = 0; l < 5; ++l) {
            QCOMPARE(f.stride(l), strides[size_t(l)]);
            QCOMPARE(f.keyStride(l), keyStrides[size_t(l)]);
            QCOMPARE(f.poolsAt(l), l == 2 || l == 3);
            QCOMPARE(f.upsamplesAt(l), l == 4);
        }
        QCOMPARE(f.skipLayer(), 1);
        QCOMPARE(f.finalStride(), 4);
        // 8 tokens: 8 + 8 + 4 + 2 + 8 query positions of 5 · 8
        QCOMPARE(f.workShare(8), 30.0 / 40.0);
    }

    // Stride 2 over 5 rows: rows 0, 2 pooled with the next, row 4 alone, the others 0; the backward halves.
    void poolAndUpsampleOps()
    {
        const Tensor x = literal({5, 1}, {1, 3, 5, 7, 9});
        Tensor p({5, 1});
        ops::funnel_pool_forward(p, x, 2);
        QCOMPARE(std::vector<float>(p.data(), p.data() + 5), (std::vector<float> {2, 0, 6, 0, 9}));
        Tensor dx({5, 1});
        ops::funnel_pool_backward(dx, literal({5, 1}, {1, 1, 1, 1, 1}), 2);
        QCOMPARE(std::vector<float>(dx.data(), dx.data() + 5), (std::vector<float> {0.5f, 0.5f, 0.5f, 0.5f, 1}));
        // Stride 4 (pooled at positions 0, 2 … then 0, 4): the second pooling averages rows t and t + 2.
        Tensor p4({5, 1});
        ops::funnel_pool_forward(p4, p, 4);
        QCOMPARE(std::vector<float>(p4.data(), p4.data() + 5), (std::vector<float> {4, 0, 0, 0, 9}));
        Tensor u({5, 1});
        ops::funnel_upsample_forward(u, p4, x, 4);
        QCOMPARE(std::vector<float>(u.data(), u.data() + 5), (std::vector<float> {5, 7, 9, 11, 18}));
        Tensor dc({5, 1}), ds({5, 1});
        ops::funnel_upsample_backward(dc, ds, literal({5, 1}, {1, 2, 3, 4, 5}), 4);
        QCOMPARE(std::vector<float>(dc.data(), dc.data() + 5), (std::vector<float> {10, 0, 0, 0, 5}));
        QCOMPARE(std::vector<float>(ds.data(), ds.data() + 5), (std::vector<float> {1, 2, 3, 4, 5}));
    }

    void forwardMatchesTheShortenedSequence()
    {
        const testing::ReferenceCase c = testing::loadReferenceCase("funnel", "tiny");
        const FunnelLayout &f = c.model->config.funnel;
        QVERIFY(f.active());
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const Trace &tr = engine.trace();
        const int T = int(c.input.tokens.size());
        QString diff = testing::compareToReference("logits", tr.tensor("logits"), funnelReference("logits"), 1e-5);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        for (int l = 0; l < c.model->config.layers; ++l) {
            const std::string p = "layer." + std::to_string(l) + ".";
            const std::vector<int> rows = present(T, f.stride(l)), keys = present(T, f.keyStride(l));
            diff = testing::compareToReference(QString::fromStdString(p + "attn.probs"),
                attentionAt(tr.tensor(p + "attn.probs"), rows, keys), funnelReference("probs." + QString::number(l)),
                1e-5);
            QVERIFY2(diff.isEmpty(), qPrintable(diff));
            diff = testing::compareToReference(QString::fromStdString(p + "out"),
                testing::rowsOf(tr.tensor(p + "out"), rows), funnelReference("out." + QString::number(l)), 1e-5);
            QVERIFY2(diff.isEmpty(), qPrintable(diff));
            // Keys no longer present get exactly nothing.
            const Tensor &probs = tr.tensor(p + "attn.probs");
            for (int j = 0; j < T; ++j)
                if (j % f.keyStride(l) != 0)
                    QCOMPARE(probs.slice(0)(0, j), 0.0f);
        }
    }

    void gradientsMatchAutograd()
    {
        const testing::ReferenceCase c = testing::loadReferenceCase("funnel", "tiny");
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const Gradients g = backward(*c.model, c.input, engine.trace(), c.targets);
        QVERIFY(std::fabs(g.loss - funnelReference("loss").data()[0]) < 1e-5f);
        const QString why = testing::checkReferenceGradients(
            gradientsAsStored(*c.model, g), kFunnelRef, [](const QString &name, const Tensor &got, const Tensor &want) {
                return testing::compareToReference(name, got, want, 1e-4);
            });
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    // The logit lens reads every stream, and says which positions a pooled block no longer has; early exit, which
    // needs each token's own prediction after every block, refuses a funnel.
    void lensMarksPooledPositions()
    {
        const testing::ReferenceCase c = testing::loadReferenceCase("funnel", "tiny");
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const LogitLens lens = logitLens(*c.model, engine.program(), engine.trace(), c.input, {});
        QCOMPARE(lens.strides, (std::vector<int> {1, 1, 2, 4, 1}));
        QVERIFY(lens.present(2, 4) && !lens.present(2, 5) && !lens.present(3, 6) && lens.present(3, 8));
        QVERIFY(
            earlyExitProblem(c.model->config, engine.program(), engine.trace()).find("funnel") != std::string::npos);
    }

    void refusals()
    {
        const testing::ReferenceCase c = testing::loadReferenceCase("funnel", "tiny");
        ModelConfig config = c.model->config;
        config.causal = true;
        QVERIFY(errorFrom([&] { config.validate("cfg"); }).contains("atlas_causal must be false"));
        config = c.model->config;
        config.funnel.decoderLayers = 2;
        QVERIFY(errorFrom([&] { config.validate("cfg"); }).contains("must add up to n_layer (4)"));
        config = c.model->config;
        config.funnel.blocks = {4};
        config.funnel.decoderLayers = 0;
        QVERIFY(errorFrom([&] { config.validate("cfg"); }).contains("at least two groups and one decoder layer"));
        QVERIFY(errorFrom([] {
            ModelConfig::fromJson(R"({"atlas_causal": false, "n_layer": 3, "atlas_funnel_blocks": [1, 0]})", "c.json");
        }).contains("c.json: key 'atlas_funnel_blocks' must be a list of 2 to 8 layer counts"));
        QVERIFY(errorFrom([] {
            ModelConfig::fromJson(R"({"atlas_causal": false, "n_layer": 3, "atlas_funnel_blocks": [1, 1]})", "c.json");
        }).contains("atlas_funnel_decoder_layers"));
        Input input = c.input;
        input.droppedLayers = {1};
        QVERIFY(errorFrom([&] { Engine(c.model, input).runToEnd(); }).contains("a funnel model"));
        QVERIFY(errorFrom([&] { StrategyRunner(*c.model, c.input, {}); }).contains("funnel"));
        QVERIFY(errorFrom([] { parseFunnelBlocks("1,x", "--funnel"); }).contains("--funnel: 'x' is not a number"));
        QVERIFY(errorFrom([] { parseFunnelBlocks("2", "--funnel"); }).contains("give 2 to 8 groups"));
    }

    // The config round-trips through config.json, and `train --funnel` makes the layers add up.
    void configAndTraining()
    {
        const testing::ReferenceCase c = testing::loadReferenceCase("funnel", "tiny");
        const ModelConfig back = ModelConfig::fromJson(c.model->config.toJson(), "round trip");
        QCOMPARE(back.funnel.blocks, c.model->config.funnel.blocks);
        QCOMPARE(back.funnel.decoderLayers, 1);
        TrainingRun run;
        run.task = "mlm";
        run.funnelBlocks = {1, 1};
        run.funnelDecoderLayers = 1;
        run.dModel = 32;
        run.options.steps = 2;
        run.options.batch = 2;
        const std::unique_ptr<Trainer> trainer = newTrainer(run);
        QCOMPARE(trainer->model()->config.layers, 3);
        const StepReport r = trainer->step();
        QVERIFY(std::isfinite(r.loss) && r.loss > 0);
        run.layers = 5;
        QVERIFY(errorFrom([&] { newTrainer(run); }).contains("layers 5: the funnel's groups and decoder have 3"));
    }
};

QTEST_GUILESS_MAIN(TestFunnel)
#include "tst_funnel.moc"
