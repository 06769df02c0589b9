// Shared blocks (model/sharedblocks.h: the Universal Transformer's and ALBERT's one block at every layer): the
// checkpoint holds block 0 alone and reads back tied; the gradient of a shared weight is the sum of each layer's
// gradient of the same model untied (its blocks copies of block 0), and agrees with central differences; training
// keeps the layers tied and the checkpointed runner agrees; and what it does not run with is refused by name.

#include "analysis/layerdrop.h"
#include "centraldifferences.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "generatortesting.h"
#include "io/gguf.h"
#include "io/safetensors.h"
#include "model/builtinmodels.h"
#include "model/ggufmodel.h"
#include "model/model.h"
#include "ops/ops.h"
#include "quantization/quantizationeffect.h"
#include "sanitizertesting.h"
#include "testbundle.h"
#include "train/backprop.h"
#include "train/corpus.h"
#include "train/evaluation.h"
#include "train/strategyrunner.h"
#include "train/task.h"
#include "train/trainer.h"

#include "referencetesting.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>

using namespace atlas;
using testing::errorFrom;

namespace {

// Four layers of one block 16 wide; with adaptive computation time, with the step signal.
ModelConfig sharedConfig(bool act = false, bool timestep = false)
{
    return ModelConfig::fromJson(std::string(R"({"n_layer": 4, "n_head": 2, "n_embd": 16, "vocab_size": 256,
        "n_positions": 64, "atlas_tokenizer": "bytes", "atlas_shared_blocks": true)")
            + (act ? R"(, "atlas_act": true)" : "") + (timestep ? R"(, "atlas_timestep_signal": true)" : "") + "}",
        "shared.json");
}

Input sharedInput()
{
    Input in;
    in.tokens = {72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100};
    return in;
}

std::vector<int> sharedTargets()
{
    const std::vector<int> tokens = sharedInput().tokens;
    std::vector<int> t(tokens.begin() + 1, tokens.end());
    t.push_back(33);
    return t;
}

bool sameWeights(const BlockWeights &a, const BlockWeights &b)
{
    for (size_t part = 0; part < kBlockPartCount; ++part)
        if (a.weight(BlockPart(part)).values() != b.weight(BlockPart(part)).values()
            || a.bias(BlockPart(part)).values() != b.bias(BlockPart(part)).values())
            return false;
    return true;
}

} // namespace

class TestSharedBlocks : public QObject
{
    Q_OBJECT

private slots:
    void checkpointHoldsOneBlock();
    void gradientSumsTheLayers();
    void gradientMatchesFiniteDifferences();
    void trainingKeepsTheLayersTied();
    void refusesWhatItDoesNotRun();
    void savesAsGgufWithABlockPerLayer();
    void timestepSignalIsTheStepsSinusoid();
    void generatorAgreesWithTheProgram();
    void runsTheBlockAnyNumberOfTimes();
    void austenUtHaltsEarlyOnOneBlock();
    void austenSharedNeedsItsSixSteps();
};

void TestSharedBlocks::checkpointHoldsOneBlock()
{
    const Model model = Model::random(sharedConfig(), 3);
    const auto params = model.parameters();
    QVERIFY(params.count("h.0.attn.c_attn.weight") && !params.count("h.1.attn.c_attn.weight"));
    for (size_t i = 1; i < model.blocks.size(); ++i)
        QVERIFY(sameWeights(model.blocks[i], model.blocks[0]));
    ModelConfig untied = model.config;
    untied.shared.enabled = false;
    ModelConfig three = untied;
    three.layers = 3;
    const int64_t block = Model::parameterCountOf(untied) - Model::parameterCountOf(three);
    QCOMPARE(model.parameterCount(), Model::parameterCountOf(untied) - 3 * block);
    QTemporaryDir dir;
    model.save(dir.path().toStdString());
    const SafetensorsFile file(dir.filePath("model.safetensors").toStdString());
    QVERIFY(file.contains("h.0.mlp.c_fc.weight") && !file.contains("h.3.mlp.c_fc.weight"));
    const Model back = Model::load(dir.path().toStdString());
    QVERIFY(back.config.shared.enabled);
    QCOMPARE(back.blocks.size(), size_t(4));
    for (const BlockWeights &b : back.blocks)
        QVERIFY(sameWeights(b, model.blocks[0]));
    Engine a(std::make_shared<Model>(model), sharedInput()), b(std::make_shared<Model>(back), sharedInput());
    a.runToEnd();
    b.runToEnd();
    QCOMPARE(b.trace().tensor("logits").values(), a.trace().tensor("logits").values());
    QCOMPARE(quantizationProblem(back, 3), std::string()); // layer 3's matrices are block 0's
}

// The reference: the same weights as a model of four blocks of its own, whose gradients the backward computes layer
// by layer (tests/tst_backprop.cpp checks that one against PyTorch); a shared weight's gradient is their sum.
void TestSharedBlocks::gradientSumsTheLayers()
{
    for (const auto &[act, timestep] : {std::pair {false, false}, {true, false}, {false, true}}) {
        const auto shared = std::make_shared<Model>(Model::random(sharedConfig(act, timestep), 7));
        auto untied = std::make_shared<Model>(*shared);
        untied->config.shared.enabled = false;
        Engine e(shared, sharedInput()), u(untied, sharedInput());
        e.runToEnd();
        u.runToEnd();
        QCOMPARE(e.trace().tensor("logits").values(), u.trace().tensor("logits").values());
        const Gradients gs = backward(*shared, sharedInput(), e.trace(), sharedTargets());
        const Gradients gu = backward(*untied, sharedInput(), u.trace(), sharedTargets());
        QCOMPARE(gs.loss, gu.loss);
        int summed = 0;
        for (const auto &[name, grad] : gs.grads) {
            if (!name.starts_with("h.0.")) {
                QCOMPARE(grad.values(), gu.grads.at(name).values());
                continue;
            }
            Tensor sum(grad.shape());
            for (int layer = 0; layer < 4; ++layer) {
                const Tensor &g = gu.grads.at("h." + std::to_string(layer) + name.substr(3));
                for (int64_t k = 0; k < sum.numel(); ++k)
                    sum.data()[k] += g.data()[k];
            }
            const QString why = testing::compareToReference(QString::fromStdString(name), grad, sum, 1e-5);
            QVERIFY2(why.isEmpty(), qPrintable(why));
            ++summed;
        }
        QVERIFY(summed >= 12);
    }
}

// ∂loss/∂θ of shared weights against (f(θ + h) − f(θ − h)) / 2h, each run with the changed block at every layer.
void TestSharedBlocks::gradientMatchesFiniteDifferences()
{
    const auto model = std::make_shared<Model>(Model::random(sharedConfig(false, true), 11));
    Engine engine(model, sharedInput());
    engine.runToEnd();
    const Gradients g = backward(*model, sharedInput(), engine.trace(), sharedTargets());
    const auto loss = [&](const std::string &name, int64_t index, float value) {
        Model m = *model;
        m.parameters().at(name)->data()[index] = value;
        m.tieSharedBlocks();
        Engine run(std::make_shared<Model>(std::move(m)), sharedInput());
        run.runToEnd();
        Tensor losses({int64_t(sharedTargets().size())});
        return double(ops::crossentropy_forward(losses, run.trace().tensor("logits"), sharedTargets()));
    };
    int checked = 0;
    const QString why = testing::centralDifferenceMismatch(*model, g,
        {"h.0.ln_1.weight", "h.0.attn.c_attn.weight", "h.0.mlp.c_fc.bias", "h.0.mlp.c_proj.weight"}, {.count = 5}, loss,
        checked);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QCOMPARE(checked, 20);
}

void TestSharedBlocks::trainingKeepsTheLayersTied()
{
    auto model = std::make_shared<Model>(Model::random(sharedConfig(false, true), 5));
    const FloatBuffer before = model->blocks[0].weight(BlockPart::Up).values();
    TrainOptions o;
    o.steps = 3;
    o.batch = 2;
    o.warmupSteps = 1;
    Trainer trainer(model, "copy", o);
    for (int s = 0; s < 3; ++s)
        trainer.step();
    QVERIFY(model->blocks[0].weight(BlockPart::Up).values() != before);
    for (const BlockWeights &b : model->blocks)
        QVERIFY(sameWeights(b, model->blocks[0]));
    Engine engine(model, sharedInput());
    engine.runToEnd();
    const Gradients traced = backward(*model, sharedInput(), engine.trace(), sharedTargets());
    MemoryOptions checkpoint;
    checkpoint.strategy = MemoryStrategy::Checkpoint;
    StrategyRunner runner(*model, sharedInput(), checkpoint);
    runner.forward();
    Gradients g;
    runner.backward(sharedTargets(), g);
    QCOMPARE(g.grads.size(), traced.grads.size());
    for (const auto &[name, grad] : traced.grads) {
        const QString why = testing::compareToReference(QString::fromStdString(name), g.grads.at(name), grad, 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
}

void TestSharedBlocks::refusesWhatItDoesNotRun()
{
    const QString notBoolean = errorFrom([] {
        ModelConfig::fromJson(R"({"n_layer": 2, "n_head": 2, "n_embd": 8, "vocab_size": 256, "n_positions": 16,
            "atlas_shared_blocks": "yes"})",
            "shared.json");
    });
    QCOMPARE(notBoolean, QString("shared.json: key 'atlas_shared_blocks' must be true or false"));
    const QString experts = errorFrom([] {
        ModelConfig::fromJson(R"({"n_layer": 2, "n_head": 2, "n_embd": 8, "vocab_size": 256, "n_positions": 16,
            "atlas_shared_blocks": true, "atlas_experts": 2})",
            "shared.json");
    });
    QVERIFY2(
        experts.startsWith("shared.json: atlas_shared_blocks") && experts.contains("experts"), qPrintable(experts));
    const ModelConfig back = ModelConfig::fromJson(sharedConfig().toJson(), "back.json");
    QVERIFY(back.shared.enabled);
    QVERIFY(ModelConfig::fromJson(sharedConfig(true, true).toJson(), "back.json").shared.timestepSignal);
}

// llama.cpp has a block per layer: the shared block is written at each of the four, and the file read back computes
// the model's logits. Halting and the step signal have no GGUF form and are refused by name, nothing written.
void TestSharedBlocks::savesAsGgufWithABlockPerLayer()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath("shared.gguf").toStdString();
    const auto model = std::make_shared<Model>(Model::random(sharedConfig(), 1));
    saveGgufModel(*model, path, GgmlType::F32);
    const GgufFile file(path);
    QVERIFY(file.find("blk.3.attn_qkv.weight") && !file.find("blk.4.attn_qkv.weight"));
    const std::shared_ptr<const Model> back = loadModel(path);
    QVERIFY(!back->config.shared.enabled);
    QCOMPARE(back->config.layers, 4);
    Engine a(model, sharedInput()), b(back, sharedInput());
    a.runToEnd();
    b.runToEnd();
    const QString why
        = testing::compareToReference("logits", b.trace().tensor("logits"), a.trace().tensor("logits"), 1e-5);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    for (const auto &[act, timestep, name] : {std::tuple {true, false, "adaptive computation time"},
             std::tuple {false, true, "a step signal before each block"}}) {
        const std::string refused = dir.filePath("refused.gguf").toStdString();
        const Model model = Model::random(sharedConfig(act, timestep), 1); // clang 14: no binding in a lambda
        const QString e = errorFrom([&] { saveGgufModel(model, refused, GgmlType::F32); });
        QVERIFY2(e.contains(name) && e.contains("nothing was written"), qPrintable(e));
        QVERIFY(!QFile::exists(QString::fromStdString(refused)));
    }
}

// Before step t = i + 1 every position gains S(t)_2j = sin(t / 10000^(2j/D)), S(t)_2j+1 = cos(…), written out here from
// the paper's definition; the block's first norm reads the sum.
void TestSharedBlocks::timestepSignalIsTheStepsSinusoid()
{
    const auto model = std::make_shared<Model>(Model::random(sharedConfig(false, true), 13));
    Engine engine(model, sharedInput());
    engine.runToEnd();
    const Trace &trace = engine.trace();
    const int64_t D = 16;
    for (int layer = 0; layer < 4; ++layer) {
        const std::string p = "layer." + std::to_string(layer) + ".";
        const Tensor &in = trace.tensor(layer == 0 ? "input" : "layer." + std::to_string(layer - 1) + ".out");
        const Tensor &with = trace.tensor(p + "timestep");
        double largest = 0;
        for (int64_t row = 0; row < in.dim(0); ++row)
            for (int64_t j = 0; j < D; ++j) {
                const double angle = double(layer + 1) / std::pow(10000.0, double(j - j % 2) / double(D));
                const double want = in.matrix()(row, j) + (j % 2 == 0 ? std::sin(angle) : std::cos(angle));
                largest = std::max(largest, std::fabs(want - with.matrix()(row, j)));
            }
        QVERIFY2(largest < 1e-6, qPrintable(QString("%1timestep: off by %2").arg(p.c_str()).arg(largest)));
        const int op = engine.program().producerOf(p + "ln_1");
        QCOMPARE(engine.program().ops[size_t(op)].inputs.at(0), p + "timestep");
    }
    const Program &program = engine.program();
    const std::string formula = program.ops[size_t(program.producerOf("layer.2.timestep"))].outputs[0].formula;
    QVERIFY2(formula.find("X + S(3)") != std::string::npos, formula.c_str());
    ModelConfig alone = sharedConfig();
    alone.shared.enabled = false;
    alone.shared.timestepSignal = true;
    QVERIFY(errorFrom([&] { alone.validate("alone.json"); }).contains("needs atlas_shared_blocks"));
}

void TestSharedBlocks::generatorAgreesWithTheProgram()
{
    for (const bool act : {false, true}) {
        std::shared_ptr<const Model> model = std::make_shared<Model>(Model::random(sharedConfig(act, true), 17));
        const QString why = testing::cachedLogitsAgainstProgram(model, {3, 17, 42}, 12);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
}

// Depth chosen at run time: the block applied 7 times runs the first 4 as the model of 4 does, then 3 more; a model of
// blocks of its own, and a count outside 1..64, are refused by name.
void TestSharedBlocks::runsTheBlockAnyNumberOfTimes()
{
    const auto model = std::make_shared<const Model>(Model::random(sharedConfig(), 19));
    const auto deeper = std::make_shared<const Model>(model->withDepth(7, "steps"));
    QCOMPARE(deeper->config.layers, 7);
    Engine four(model, sharedInput()), seven(deeper, sharedInput());
    four.runToEnd();
    seven.runToEnd();
    for (int layer = 0; layer < 4; ++layer) {
        const std::string out = "layer." + std::to_string(layer) + ".out";
        QCOMPARE(seven.trace().tensor(out).values(), four.trace().tensor(out).values());
    }
    QVERIFY(seven.trace().contains("layer.6.out"));
    QVERIFY(seven.trace().tensor("logits").values() != four.trace().tensor("logits").values());
    Engine same(std::make_shared<const Model>(model->withDepth(4, "steps")), sharedInput());
    same.runToEnd();
    QCOMPARE(same.trace().tensor("logits").values(), four.trace().tensor("logits").values());
    ModelConfig untied = sharedConfig();
    untied.shared.enabled = false;
    const QString own = errorFrom([&] { Model::random(untied, 1).withDepth(6, "steps"); });
    QVERIFY2(own.startsWith("steps: model 'random' has a block of its own"), qPrintable(own));
    QVERIFY(errorFrom([&] { model->withDepth(0, "steps"); }).contains("give 1 to 64"));
    QVERIFY(errorFrom([&] { model->withDepth(65, "steps"); }).contains("give 1 to 64"));
}

// The shipped Universal Transformer: one block of austen-6's shape applied up to six times, each character halting.
void TestSharedBlocks::austenUtHaltsEarlyOnOneBlock()
{
    ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
    const auto model = loadModel("austen-ut");
    QVERIFY(model->config.shared.enabled && model->config.act.enabled);
    const Evaluation e = evaluateOnTask(model, *Task::create("chars"), 256);
    QVERIFY2(e.loss <= 1.60 && e.tokenAccuracy >= 0.515,
        qPrintable(QString("%1 nats, %2").arg(e.loss).arg(e.tokenAccuracy)));
    QCOMPARE(model->parameterCount(), int64_t(74753)); // austen-act's 324,673 less five blocks of 49,984
    double steps = 0, spaces = 0, letters = 0;
    int count = 0, spaceCount = 0, letterCount = 0;
    std::map<int, int> histogram;
    for (int w = 0; w < 20; ++w) {
        const std::string window = corpusHeldOut().substr(5000 + size_t(w) * 997, 128);
        Engine engine(model, Input {std::vector<int>(window.begin(), window.end()), {}});
        engine.runToEnd();
        const Tensor &n = engine.trace().tensor("act.steps");
        for (int64_t t = 0; t < n.numel(); ++t) {
            histogram[int(n.data()[t])]++;
            steps += n.data()[t];
            ++count;
            if (window[size_t(t)] == ' ') {
                spaces += n.data()[t];
                ++spaceCount;
            } else if (std::isalpha(static_cast<unsigned char>(window[size_t(t)]))) {
                letters += n.data()[t];
                ++letterCount;
            }
        }
    }
    const double mean = steps / count, space = spaces / spaceCount, letter = letters / letterCount;
    const QString what = QString("N %1 on average, %2 after a space, %3 after a letter, %4 of %5 at N ≤ 2")
                             .arg(mean)
                             .arg(space)
                             .arg(letter)
                             .arg(histogram[1] + histogram[2])
                             .arg(count);
    QVERIFY2(mean > 1.5 && mean < 1.85 && letter > space + 0.25 && histogram[1] + histogram[2] > 0.9 * count,
        qPrintable(what));
    // Depth at run time (evaluate --step-sweep): one step falls short, two do what six do, and twelve no more.
    const StepSweep sweep = stepSweep(model, 12, 256);
    const double trained = sweep.scores[5].tokenAccuracy;
    QVERIFY2(sweep.scores[0].tokenAccuracy < trained - 0.04
            && std::fabs(sweep.scores[1].tokenAccuracy - trained) < 0.003
            && std::fabs(sweep.scores[11].tokenAccuracy - trained) < 0.003,
        qPrintable(QString("%1, %2, %3 at 1, 2 and 12 steps against %4 at 6")
                       .arg(sweep.scores[0].tokenAccuracy)
                       .arg(sweep.scores[1].tokenAccuracy)
                       .arg(sweep.scores[11].tokenAccuracy)
                       .arg(trained)));
}

// austen-shared, the same block without halting (docs/models.md, "Shared blocks"; lesson 20): 53.6 % of held-out
// characters at its six steps, far less at one, and falling again past six (37.4 % at twelve).
void TestSharedBlocks::austenSharedNeedsItsSixSteps()
{
    ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
    const auto model = loadModel("austen-shared");
    QVERIFY(model->config.shared.enabled && !model->config.act.enabled);
    QCOMPARE(model->parameterCount(), int64_t(74688));
    const StepSweep sweep = stepSweep(model, 12, 256);
    const auto accuracy = [&sweep](int steps) { return sweep.scores[size_t(steps - 1)].tokenAccuracy; };
    const QString what
        = QString("%1 at one step, %2 at six, %3 at twelve").arg(accuracy(1)).arg(accuracy(6)).arg(accuracy(12));
    QVERIFY2(accuracy(6) >= 0.52 && accuracy(1) < 0.10 && accuracy(12) < accuracy(6) - 0.08, qPrintable(what));
}

QTEST_GUILESS_MAIN(TestSharedBlocks)
#include "tst_sharedblocks.moc"
