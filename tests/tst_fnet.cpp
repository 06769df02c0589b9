// FNet's token mixing (Lee-Thorp et al. 2021; src/core/ops/fourier.cpp, model/fourierlayers.h): the transform and its
// gradient against PyTorch's FFT (tests/tools/make_fnet_reference.py), as Hugging Face's FNet computes it and padded
// to the model's context; a hybrid model's gradients against central differences and under checkpointing; the
// blocks' parameters, trace and config; the refusals; and the shipped austen-fnet's masked-character accuracy.

#include "centraldifferences.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "io/npy.h"
#include "model/builtinmodels.h"
#include "model/fourierlayers.h"
#include "ops/ops.h"
#include "sanitizertesting.h"
#include "testbundle.h"
#include "train/backprop.h"
#include "train/evaluation.h"
#include "train/strategyrunner.h"
#include "train/task.h"
#include "train/trainingsetup.h"

#include "referencetesting.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace atlas;
using testing::errorFrom;

namespace {

Tensor loadFnet(const std::string &name)
{
    return readNpy(std::string(ATLAS_TEST_DATA "/fnet/") + name + ".npy");
}

// Two blocks: block 0 mixes by the Fourier transform, block 1 attends (FNet-Hybrid's order reversed, so that the
// attention's gradient also passes through the transform on its way to the embedding).
ModelConfig hybridConfig()
{
    return ModelConfig::fromJson(R"({"n_layer": 2, "n_head": 2, "n_embd": 16, "vocab_size": 256, "n_positions": 16,
        "atlas_tokenizer": "bytes", "atlas_causal": false, "atlas_fourier_layers": [0]})",
        "fnet.json");
}

Input hybridInput()
{
    Input input;
    for (int t = 0; t < 11; ++t) // shorter than the context: the transform pads 5 zero rows
        input.tokens.push_back((7 * t + 3) % 256);
    return input;
}

std::vector<int> hybridTargets()
{
    std::vector<int> targets;
    for (int t = 0; t < 11; ++t)
        targets.push_back(t % 3 == 1 ? (5 * t + 1) % 256 : -1);
    return targets;
}

} // namespace

class TestFnet : public QObject
{
    Q_OBJECT

private slots:
    void transformMatchesPyTorch();
    void blocksHaveNoAttention();
    void modelGradientsMatchFiniteDifferences();
    void checkpointingGivesTheSameGradients();
    void configReadsBackAndRefuses();
    void austenFnetNamesMaskedCharacters();
};

void TestFnet::transformMatchesPyTorch()
{
    for (const std::string c : {"full", "padded"}) {
        const Tensor x = loadFnet(c + "_x"), dout = loadFnet(c + "_dout");
        const int64_t length = int64_t(loadFnet(c + "_length").data()[0]);
        Tensor y(x.shape()), dx(x.shape());
        ops::fourier_mix_forward(y, x, length);
        QString why = testing::compareToReference(QString::fromStdString(c + " y"), y, loadFnet(c + "_y"), 1e-5);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        ops::fourier_mix_forward(dx, dout, length); // its own adjoint
        why = testing::compareToReference(QString::fromStdString(c + " dx"), dx, loadFnet(c + "_dx"), 1e-5);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
    Tensor x({5, 3}), y({5, 3});
    QVERIFY(errorFrom([&] { ops::fourier_mix_forward(y, x, 4); }).contains("more than the transform's 4 positions"));
}

// Block 0 keeps its norms and feed-forward and has no attention weights; its trace has the transform in attention's
// place, and the formula says how many zero rows pad the input.
void TestFnet::blocksHaveNoAttention()
{
    const auto model = std::make_shared<Model>(Model::random(hybridConfig(), 3));
    const auto params = model->parameters();
    QVERIFY(!params.count("h.0.attn.c_attn.weight") && !params.count("h.0.attn.c_proj.bias"));
    QVERIFY(params.count("h.0.ln_1.weight") && params.count("h.0.mlp.c_fc.weight"));
    QVERIFY(params.count("h.1.attn.c_attn.weight"));
    Engine engine(model, hybridInput());
    engine.runToEnd();
    const Trace &trace = engine.trace();
    QVERIFY(trace.contains("layer.0.fourier.out") && !trace.contains("layer.0.attn.probs"));
    QVERIFY(trace.contains("layer.1.attn.probs"));
    const int op = engine.program().producerOf("layer.0.fourier.out");
    QVERIFY(op >= 0);
    const std::string formula = engine.program().ops[size_t(op)].outputs[0].formula;
    QVERIFY2(formula.find("padded with 5 zero rows") != std::string::npos, formula.c_str());
    Tensor want(trace.tensor("layer.0.ln_1").shape());
    ops::fourier_mix_forward(want, trace.tensor("layer.0.ln_1"), 16);
    QCOMPARE(trace.tensor("layer.0.fourier.out").values(), want.values());
    Input padded = hybridInput();
    padded.padding = {10}; // the transform would mix it in: refused
    QVERIFY(errorFrom([&] { Engine(model, padded).runToEnd(); }).contains("drop the token schedule or the padding"));
}

// ∂loss/∂θ of a few weights on each side of the transform, against (f(θ + h) − f(θ − h)) / 2h with the model run again.
void TestFnet::modelGradientsMatchFiniteDifferences()
{
    const auto model = std::make_shared<Model>(Model::random(hybridConfig(), 5));
    const Input input = hybridInput();
    const std::vector<int> targets = hybridTargets();
    Engine engine(model, input);
    engine.runToEnd();
    const Gradients g = backward(*model, input, engine.trace(), targets);
    const auto loss = [&](const std::string &name, int64_t index, float value) {
        Model m = *model;
        m.parameters().at(name)->data()[index] = value;
        Engine e(std::make_shared<Model>(std::move(m)), input);
        e.runToEnd();
        Tensor losses({int64_t(targets.size())});
        return double(ops::crossentropy_forward(losses, e.trace().tensor("logits"), targets));
    };
    int checked = 0;
    const QString why = testing::centralDifferenceMismatch(*model, g,
        {"wte.weight", "h.0.ln_1.weight", "h.0.ln_1.bias", "h.0.mlp.c_fc.bias", "h.1.attn.c_attn.weight"}, {}, loss,
        checked);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QCOMPARE(checked, 30);
    const Tensor &dgain = g.grads.at("h.0.ln_1.weight");
    QVERIFY2(std::any_of(dgain.data(), dgain.data() + dgain.numel(), [](float v) { return std::fabs(v) > 1e-4f; }),
        "the transform passes no gradient to its input");
}

void TestFnet::checkpointingGivesTheSameGradients()
{
    const auto model = std::make_shared<Model>(Model::random(hybridConfig(), 9));
    Engine engine(model, hybridInput());
    engine.runToEnd();
    const Gradients traced = backward(*model, hybridInput(), engine.trace(), hybridTargets());
    MemoryOptions checkpoint;
    checkpoint.strategy = MemoryStrategy::Checkpoint;
    StrategyRunner runner(*model, hybridInput(), checkpoint);
    runner.forward();
    Gradients g;
    runner.backward(hybridTargets(), g);
    QCOMPARE(g.loss, traced.loss);
    for (const auto &[name, grad] : traced.grads) {
        const QString why = testing::compareToReference(QString::fromStdString(name), g.grads.at(name), grad, 1e-6);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
}

void TestFnet::configReadsBackAndRefuses()
{
    const ModelConfig back = ModelConfig::fromJson(hybridConfig().toJson(), "back.json");
    QCOMPARE(back.fourier.layers, std::vector<int> {0});
    const auto refusal = [](const char *extra) {
        return errorFrom([extra] {
            ModelConfig::fromJson(std::string(R"({"n_layer": 2, "n_head": 2, "n_embd": 8, "vocab_size": 256,
                "n_positions": 16, )")
                    + extra + "}",
                "fnet.json");
        });
    };
    QString e = refusal(R"("atlas_fourier_layers": [0])");
    QVERIFY2(e.contains("fnet.json") && e.contains("atlas_causal must be false"), qPrintable(e));
    e = refusal(R"("atlas_causal": false, "atlas_fourier_layers": [2])");
    QVERIFY2(e.contains("names layer 2, the model has layers 0..1"), qPrintable(e));
    e = refusal(R"("atlas_causal": false, "atlas_fourier_layers": [1, 1])");
    QVERIFY2(e.contains("names layer 1 twice"), qPrintable(e));
    e = refusal(R"("atlas_causal": false, "atlas_fourier_layers": "all")");
    QVERIFY2(e.contains("key 'atlas_fourier_layers' must be a list of layer numbers"), qPrintable(e));
    e = refusal(R"("atlas_causal": false, "atlas_reversible": true, "atlas_fourier_layers": [0])");
    QVERIFY2(
        e.contains("GPT-2's or BERT's blocks, pre- or post-LN, and the model has reversible blocks"), qPrintable(e));
    QCOMPARE(parseFourierLayers("all", 3, "--fourier"), (std::vector<int> {0, 1, 2}));
    QVERIFY(errorFrom([] { parseFourierLayers("0,x", 3, "--fourier"); }).contains("--fourier: 'x' is not"));
    TrainingRun run;
    run.task = "mlm";
    run.fourier = "all";
    const ModelConfig trained = trainingModelConfig(run, false);
    QCOMPARE(int(trained.fourier.layers.size()), trained.layers);
    run.task = "chars"; // a causal task
    QVERIFY(errorFrom([&] { trainingModelConfig(run, false); }).contains("atlas_causal must be false"));
}

// The shipped model, as docs/models.md states it: BERT's layout with every block an FNet block names 64.9 % of the
// chosen characters on 256 held-out windows (1.16 nats), where austen-bert, the same with attention, names 76.3 %.
void TestFnet::austenFnetNamesMaskedCharacters()
{
    const auto model = loadModel("austen-fnet");
    QVERIFY(model->config.family == Family::Bert);
    QCOMPARE(int(model->config.fourier.layers.size()), model->config.layers);
    QVERIFY(!model->parameters().count("bert.encoder.layer.0.attention.self.query.weight"));
    ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
    const Evaluation e = evaluateOnTask(model, *Task::create("mlm"), 256);
    QVERIFY2(
        e.loss <= 1.18 && e.tokenAccuracy >= 0.64, qPrintable(QString("%1 nats, %2").arg(e.loss).arg(e.tokenAccuracy)));
}

QTEST_GUILESS_MAIN(TestFnet)
#include "tst_fnet.moc"
