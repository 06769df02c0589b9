// LayerDrop (Fan et al. 2019) and pruning whole blocks: a dropped block passes its stream on unchanged, so a run with
// the top blocks dropped gives the logits the logit lens reads below them (an independent route through the output
// head); gradients through a dropped run against central differences, the dropped block's own gradients zero, the
// strategy runner's equal to backprop's; the trainer's draws reproducible from its seed and saved with its state;
// the pruning rules and the errors that name what is wrong.
#include "analysis/layerdrop.h"
#include "analysis/logitlens.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "layerdrop/layerdrop.h"
#include "model/builtinmodels.h"
#include "ops/ops.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "train/backprop.h"
#include "train/strategyrunner.h"
#include "train/task.h"
#include "train/trainer.h"
#include "view/viewkinds.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <numeric>

using namespace atlas;
using namespace atlas::testing;
using atlas::testing::errorFrom;

namespace {

Tensor logitsOf(std::shared_ptr<const Model> model, const Input &input)
{
    Engine engine(std::move(model), input);
    engine.runToEnd();
    const Tensor &z = engine.trace().tensor("logits");
    Tensor copy(z.shape());
    std::copy(z.data(), z.data() + z.numel(), copy.data());
    return copy;
}

std::shared_ptr<Model> smallModel(int layers)
{
    ModelConfig config = Task::create("reverse")->modelConfig();
    config.layers = layers;
    return std::make_shared<Model>(Model::random(config, 7));
}

} // namespace

class TestLayerDrop : public QObject
{
    Q_OBJECT

private slots:
    // Dropping the top k blocks leaves the stream after L − k blocks for the head: the lens's row L − k.
    void droppingTheTopBlocksIsTheLensBelowThem()
    {
        const std::shared_ptr<const Model> m = loadModel("austen");
        const int L = m->config.layers;
        const Input whole {{40, 73, 1, 70, 74, 1, 56, 1, 75, 73}, {}};
        Engine engine(m, whole);
        engine.runToEnd();
        std::vector<int> positions(whole.tokens.size());
        std::iota(positions.begin(), positions.end(), 0);
        for (int kept = 0; kept < L; ++kept) {
            Input pruned = whole;
            for (int l = kept; l < L; ++l)
                pruned.droppedLayers.push_back(l);
            const Tensor lens = outputHeadLogits(*m, engine.program(), engine.trace(), whole, kept, positions);
            const float worst = maxDifference(logitsOf(m, pruned), lens);
            QVERIFY2(worst < 1e-5f, qPrintable(QString("%1 blocks kept: %2").arg(kept).arg(worst)));
        }
        Input middle = whole; // a dropped block's output is its input, to the bit
        middle.droppedLayers = {1};
        Engine dropped(m, middle);
        dropped.runToEnd();
        const Tensor &in = dropped.trace().tensor("layer.0.out"), &out = dropped.trace().tensor("layer.1.out");
        QCOMPARE(maxDifference(in, out), 0.0f);
        QVERIFY(!dropped.trace().contains("layer.1.attn.probs"));
        QVERIFY(QString::fromStdString(dropped.trace().find("layer.1.out")->formula).contains("LayerDrop"));
    }

    // d loss / d θ through a run with block 1 of 3 dropped, against central differences of the loss on a few
    // weights of blocks 0 and 2; block 1's gradients are 0, and the plain strategy runner gives backprop's.
    void gradientsPassThroughADroppedBlock()
    {
        const std::shared_ptr<Model> model = smallModel(3);
        Input input {{3, 5, 9, 2, 7, 1, 4}, {}};
        input.droppedLayers = {1};
        const std::vector<int> targets {5, 9, 2, 7, 1, 4, -1};
        Engine engine(model, input);
        engine.runToEnd();
        const Gradients g = backward(*model, input, engine.trace(), targets);
        const auto lossWith = [&](int layer, int64_t index, float value) {
            Model m = *model;
            m.blocks[size_t(layer)].weight(BlockPart::Down).data()[index] = value;
            const Tensor z = logitsOf(std::make_shared<Model>(std::move(m)), input);
            Tensor losses({int64_t(targets.size())});
            return double(ops::crossentropy_forward(losses, z, targets));
        };
        for (int layer : {0, 2}) {
            const Tensor &grad = g.grads.at("h." + std::to_string(layer) + ".mlp.c_proj.weight");
            for (int64_t index : {int64_t(0), int64_t(97), int64_t(1023)}) {
                const float w = model->blocks[size_t(layer)].weight(BlockPart::Down).data()[index], h = 1.0f / 64;
                const double numeric = (lossWith(layer, index, w + h) - lossWith(layer, index, w - h)) / (2.0 * h);
                QVERIFY2(std::fabs(numeric - grad.data()[index]) <= 2e-3 + 2e-2 * std::fabs(numeric),
                    qPrintable(QString("block %1 weight %2: analytic %3, numeric %4")
                                   .arg(layer)
                                   .arg(index)
                                   .arg(grad.data()[index])
                                   .arg(numeric)));
            }
        }
        for (const auto &[name, grad] : g.grads)
            if (name.starts_with("h.1."))
                for (int64_t i = 0; i < grad.numel(); ++i)
                    QCOMPARE(grad.data()[i], 0.0f);

        Gradients viaRunner;
        StrategyRunner runner(*model, input, MemoryOptions {});
        runner.forward();
        runner.backward(targets, viaRunner);
        QCOMPARE(viaRunner.loss, g.loss);
        for (const auto &[name, grad] : g.grads)
            QVERIFY2(maxDifference(viaRunner.grads.at(name), grad) < 1e-6f, name.c_str());
    }

    // A lesson check runs the LayerDrop sweep on two examples under a key of its own; the view's own request scores
    // LayerDropAnalysis::kExamples, and neither is served the other's result.
    void aLessonCheckSweepsTheLeastWork()
    {
        ViewSpec spec;
        spec.view = "layerdrop";
        spec.model = "reverse";
        AnalysisContext c;
        c.model = loadModel("reverse");
        const AnalysisRequest full = findViewKind("layerdrop")->request(spec, c);
        c.checkOnly = true;
        const AnalysisRequest check = findViewKind("layerdrop")->request(spec, c);
        QVERIFY(full.key != check.key);
        std::string problem;
        const auto result = runAnalysisNow(check, &problem);
        QVERIFY2(result, problem.c_str());
        const DepthSweep &sweep = static_cast<const LayerDropAnalysis &>(*result).sweeps.front();
        QCOMPARE(sweep.examples, AnalysisContext::kCheckExamples);
        QCOMPARE(int(sweep.first.size()), 2);
    }

    void droppedLayersAreChecked()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse");
        Input input {{3, 5, 9}, {}};
        input.droppedLayers = {2};
        QVERIFY(
            errorFrom([&] { Engine(m, input).runToEnd(); }).contains("dropped layer 2 is not one of the model's 2"));
        input.droppedLayers = {1, 0};
        QVERIFY(errorFrom([&] { Engine(m, input).runToEnd(); }).contains("ascending"));
        input.droppedLayers = {0};
        QVERIFY(errorFrom([&] { Engine(loadModel("reverse-rev"), input).runToEnd(); }).contains("reversible"));
        MemoryOptions checkpoint;
        checkpoint.strategy = MemoryStrategy::Checkpoint;
        QVERIFY(errorFrom([&] { StrategyRunner(*m, input, checkpoint); }).contains("plain memory strategy"));
        QVERIFY(errorFrom([&] {
            (void)parseLayerList("0,5", 2, "--drop-layers");
        }).contains("--drop-layers: layer 5 is not one of the model's 2 layers"));
        QVERIFY(errorFrom([&] { (void)parseLayerList("1,1", 2, "--drop-layers"); }).contains("listed twice"));
        QCOMPARE(parseLayerList("1,0", 2, "x"), (std::vector<int> {0, 1}));
    }

    // Keep-the-first drops the top; every other keeps block ⌊(j + 1)·L / k⌋ − 1, so half of 6 keeps 1, 3, 5.
    void pruningRulesKeepWhatTheySay()
    {
        QCOMPARE(droppedBlocks(PruneRule::First, 2, 6), (std::vector<int> {2, 3, 4, 5}));
        QCOMPARE(droppedBlocks(PruneRule::EveryOther, 3, 6), (std::vector<int> {0, 2, 4}));
        QCOMPARE(droppedBlocks(PruneRule::EveryOther, 4, 6), (std::vector<int> {1, 4}));
        QCOMPARE(droppedBlocks(PruneRule::EveryOther, 1, 6), (std::vector<int> {0, 1, 2, 3, 4}));
        QVERIFY(droppedBlocks(PruneRule::EveryOther, 6, 6).empty());
        QVERIFY(errorFrom([] { (void)droppedBlocks(PruneRule::First, 0, 6); }).contains("give 1..6"));

        const std::shared_ptr<const Model> reverse = loadModel("reverse");
        const DepthSweep sweep = depthSweep(reverse, 32);
        QCOMPARE(sweep.first.size(), size_t(2));
        const Evaluation whole = evaluateOnTask(reverse, *Task::create("reverse"), 32);
        QCOMPARE(sweep.first.back().score.tokenAccuracy, whole.tokenAccuracy);
        QCOMPARE(sweep.everyOther.front().dropped, (std::vector<int> {0}));
        QVERIFY(sweep.first.front().score.tokenAccuracy < whole.tokenAccuracy);
    }

    // The same seed draws the same dropped blocks: two runs give the same bits; the rate is saved with the state,
    // and a rate out of range or with another memory strategy is refused.
    void trainingWithLayerDropIsReproducible()
    {
        TrainOptions o;
        o.steps = 3;
        o.batch = 4;
        o.layerDrop = 0.5f;
        Trainer a(smallModel(4), "reverse", o), b(smallModel(4), "reverse", o);
        for (int s = 0; s < 3; ++s)
            QCOMPARE(a.step().loss, b.step().loss);
        QTemporaryDir dir;
        a.save(dir.path().toStdString());
        QCOMPARE(Trainer::resume(dir.path().toStdString(), std::nullopt)->options().layerDrop, 0.5f);

        o.layerDrop = 0.95f;
        QVERIFY(errorFrom([&] { Trainer(smallModel(2), "reverse", o); }).contains("0..0.9"));
        o.layerDrop = 0.2f;
        o.memory.strategy = MemoryStrategy::Checkpoint;
        QVERIFY(errorFrom([&] { Trainer(smallModel(2), "reverse", o); }).contains("plain memory strategy"));
    }
};

QTEST_GUILESS_MAIN(TestLayerDrop)
#include "tst_layerdrop.moc"
