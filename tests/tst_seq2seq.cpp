// The encoder–decoder (ModelConfig::Architecture::EncoderDecoder): its forward pass, cross-attention and gradients
// against PyTorch (tests/tools/make_seq2seq_reference.py: torch.nn.MultiheadAttention for every attention, autograd
// for the gradients), its trace names (docs/trace-names.md), its config and input checks.
//
// Tolerance: max |diff| <= 1e-4 x max |ref| per tensor, as tst_backprop.

#include "analysis/headpatterns.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "io/npy.h"
#include "model/model.h"
#include "referencetesting.h"
#include "testbundle.h"
#include "trace/names.h"
#include "train/backprop.h"
#include "train/evaluation.h"
#include "train/strategyrunner.h"
#include "train/task.h"
#include "train/trainer.h"
#include "util/error.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace atlas;
using namespace atlas::testing;
using testing::errorFrom;
using testing::intList;

namespace {

QString seq2seqRefPath(const QString &file)
{
    return QStringLiteral(ATLAS_TEST_DATA "/seq2seq_tiny_ref/") + file;
}

using Case = testing::ReferenceCase;

Case loadSeq2SeqCase()
{
    return testing::loadReferenceCase(".", "seq2seq_tiny");
}

} // namespace

class TestSeq2seq : public QObject
{
    Q_OBJECT

private slots:
    void configNamesTheArchitecture();
    void forwardMatchesPyTorch();
    void crossAttentionHasItsShapesAndMask();
    void gradientsMatchPyTorch();
    void gradientsMatchFiniteDifferences();
    void savedModelLoadsBack();
    void badInputsAreClearErrors();
    void threeHundredStepsAlignTheCrossAttention();
};

void TestSeq2seq::configNamesTheArchitecture()
{
    const Case c = loadSeq2SeqCase();
    const ModelConfig &config = c.model->config;
    QVERIFY(config.architecture() == Architecture::EncoderDecoder);
    QCOMPARE(config.encoderLayers, 2);
    QCOMPARE(config.layers, 2);
    QVERIFY(config.toJson().find("\"atlas_architecture\": \"encoder-decoder\"") != std::string::npos);
    // Each decoder block has cross-attention, each encoder block has none; the encoder has its own ln_f.
    const auto params = c.model->parameters();
    QVERIFY(params.count("h.1.crossattention.q_attn.weight"));
    QVERIFY(params.count("h.1.ln_cross_attn.bias"));
    QVERIFY(params.count("encoder.h.1.attn.c_attn.weight"));
    QVERIFY(!params.count("encoder.h.1.crossattention.q_attn.weight"));
    QVERIFY(params.count("encoder.ln_f.weight"));

    const std::string base = R"({"n_layer": 1, "n_head": 2, "n_embd": 8, "vocab_size": 16, "n_positions": 8)";
    auto parse = [&](const std::string &extra) {
        return errorFrom([&] { ModelConfig::fromJson(base + extra + "}", "c.json"); });
    };
    QVERIFY(parse(R"(, "atlas_architecture": "encoder-decoder")").contains("needs atlas_encoder_layers >= 1"));
    QVERIFY(parse(R"(, "atlas_architecture": "decoder", "atlas_encoder_layers": 1)").contains("says 'decoder'"));
    QVERIFY(parse(R"(, "atlas_architecture": "transformer")").contains("must be 'decoder', 'encoder' or"));
    QVERIFY(parse(R"(, "atlas_encoder_layers": 1, "atlas_positions": "alibi")").contains("not alibi"));
    QVERIFY(parse(R"(, "atlas_encoder_layers": 1, "atlas_causal": false)").contains("causal decoder"));
    QVERIFY(parse(R"(, "atlas_encoder_layers": 1, "atlas_layer_norm": "post")").contains("'pre'"));
    QCOMPARE(parse(R"(, "atlas_architecture": "encoder")"), QString());
    QVERIFY(!ModelConfig::fromJson(base + R"(, "atlas_architecture": "encoder"})", "c.json").causal);
    QVERIFY(ModelConfig::fromJson(base + "}", "c.json").architecture() == Architecture::Decoder);
}

void TestSeq2seq::forwardMatchesPyTorch()
{
    const Case c = loadSeq2SeqCase();
    Engine engine(c.model, c.input);
    engine.runToEnd();
    const QStringList files = QDir(seq2seqRefPath("")).entryList({"*.npy"}, QDir::Files);
    int compared = 0;
    for (const QString &file : files) {
        if (file.startsWith("grad.") || file == "loss.npy")
            continue;
        const std::string name = file.chopped(4).toStdString();
        QVERIFY2(engine.trace().contains(name), name.c_str());
        const QString why = testing::compareToReference(QString::fromStdString(name), engine.trace().tensor(name),
            readNpy(seq2seqRefPath(file).toStdString()), kRelTol);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        ++compared;
    }
    QVERIFY(compared >= 25); // both stacks' blocks, the cross-attention tensors, the encoder output, the head
}

void TestSeq2seq::crossAttentionHasItsShapesAndMask()
{
    const Case c = loadSeq2SeqCase();
    Engine engine(c.model, c.input);
    engine.runToEnd();
    const int64_t H = 2, T = int64_t(c.input.tokens.size()), S = int64_t(c.input.source.size()), d = 8;
    const Trace &tr = engine.trace();
    for (int i = 0; i < 2; ++i) {
        const std::string p = names::layerPrefix(names::kDecoderStack, i) + "cross.";
        QCOMPARE(tr.tensor(p + "q").shape(), (Shape {H, T, d}));
        QCOMPARE(tr.tensor(p + "k").shape(), (Shape {H, S, d}));
        QCOMPARE(tr.tensor(p + "v").shape(), (Shape {H, S, d}));
        QCOMPARE(tr.tensor(p + "scores").shape(), (Shape {H, T, S}));
        const Tensor &probs = tr.tensor(p + "probs");
        QCOMPARE(probs.shape(), (Shape {H, T, S}));
        auto at = [&](int64_t h, int64_t t, int64_t j) { return probs.data()[(h * T + t) * S + j]; };
        for (int64_t h = 0; h < H; ++h)
            for (int64_t t = 0; t < T; ++t) {
                float sum = 0;
                for (int64_t j = 0; j < S; ++j)
                    sum += at(h, t, j);
                QVERIFY(std::fabs(sum - 1.0f) < 1e-5f);
                for (int pad : c.input.sourcePadding)
                    QCOMPARE(at(h, t, pad), 0.0f); // the source's padding is never attended
                QVERIFY(at(h, 0, S - 3) > 0.0f); // no causal mask: the first query sees later source tokens
            }
    }
    // The stacks' own names, and no unprefixed block names in an encoder–decoder's trace.
    QVERIFY(tr.contains("enc.layer.1.attn.probs") && tr.contains("dec.layer.1.attn.probs"));
    QVERIFY(tr.contains("enc.ln_f") && tr.contains("next_probs"));
    QVERIFY(!tr.contains("layer.0.attn.probs") && !tr.contains("input"));
    QCOMPARE(tr.tensor("enc.layer.0.attn.probs").shape(), (Shape {H, S, S}));
    QCOMPARE(tr.tensor("logits").shape(), (Shape {T, 30}));
    // Ops say which stack they belong to.
    const Program &program = engine.program();
    QVERIFY(program.ops.front().stack == names::kEncoderStack);
    QVERIFY(program.ops.back().stack == names::kDecoderStack);
    names::Stack stack;
    int layer = -1;
    std::string suffix;
    QVERIFY(names::splitStackTensor("dec.layer.1.cross.probs", &stack, &layer, &suffix));
    QVERIFY(stack == names::kDecoderStack && layer == 1 && suffix == "cross.probs");
    QVERIFY(names::splitStackTensor("layer.0.attn.q", &stack, &layer, &suffix) && stack == names::kOnlyStack);
}

void TestSeq2seq::gradientsMatchPyTorch()
{
    const Case c = loadSeq2SeqCase();
    Engine engine(c.model, c.input);
    engine.runToEnd();
    const Gradients g = backward(*c.model, c.input, engine.trace(), c.targets);
    const Tensor loss = readNpy(seq2seqRefPath("loss.npy").toStdString());
    QVERIFY2(std::fabs(g.loss - loss.data()[0]) <= 1e-5 * std::fabs(loss.data()[0]),
        qPrintable(QString("loss %1, PyTorch %2").arg(g.loss).arg(loss.data()[0])));
    const QString why = testing::checkReferenceGradients(gradientsAsStored(*c.model, g), seq2seqRefPath(""),
        [](const QString &name, const Tensor &got, const Tensor &want) {
            // Every parameter is reached, the encoder's through cross-attention only.
            if (Eigen::Map<const Eigen::ArrayXf>(got.data(), got.numel()).abs().maxCoeff() == 0.0f)
                return name + ": a gradient of 0";
            return testing::compareToReference(name, got, want, kRelTol);
        });
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

// A second, PyTorch-free check: central differences of the loss in a few weights of the new parameters, the
// encoder's reached only through the decoder's cross-attention.
void TestSeq2seq::gradientsMatchFiniteDifferences()
{
    const Case c = loadSeq2SeqCase();
    auto lossOf = [&](const std::shared_ptr<Model> &model) {
        Engine engine(model, c.input);
        engine.runToEnd();
        return double(backward(*model, c.input, engine.trace(), c.targets).loss);
    };
    Engine engine(c.model, c.input);
    engine.runToEnd();
    const Gradients g = backward(*c.model, c.input, engine.trace(), c.targets);
    for (const std::string name : {"h.0.crossattention.c_attn.weight", "h.1.crossattention.q_attn.weight",
             "h.1.ln_cross_attn.weight", "encoder.h.0.attn.c_attn.weight", "encoder.ln_f.bias"}) {
        const Tensor &grad = g.grads.at(name);
        const Eigen::Map<const Eigen::ArrayXf> values(grad.data(), grad.numel());
        Eigen::Index largest = 0;
        values.abs().maxCoeff(&largest);
        QVERIFY2(std::fabs(values[largest]) > 5e-3f, name.c_str()); // a gradient worth checking
        for (int64_t index : {int64_t(largest), int64_t(0), grad.numel() - 1}) {
            auto model = std::make_shared<Model>(*c.model);
            float &w = model->parameters().at(name)->data()[index];
            const float original = w, eps = 1e-2f;
            w = original + eps;
            const double up = lossOf(model);
            w = original - eps;
            const double down = lossOf(model);
            const double numeric = (up - down) / (2.0 * eps), analytic = grad.data()[index];
            QVERIFY2(std::fabs(numeric - analytic) <= 3e-4 + 2e-2 * std::fabs(analytic),
                qPrintable(QString("%1[%2]: finite difference %3, backward %4")
                               .arg(QString::fromStdString(name))
                               .arg(index)
                               .arg(numeric)
                               .arg(analytic)));
        }
    }
}

void TestSeq2seq::savedModelLoadsBack()
{
    const Case c = loadSeq2SeqCase();
    QTemporaryDir dir;
    c.model->save(dir.path().toStdString());
    const auto again = std::make_shared<Model>(Model::load(dir.path().toStdString()));
    QCOMPARE(again->config.encoderLayers, 2);
    Engine a(c.model, c.input), b(again, c.input);
    a.runToEnd();
    b.runToEnd();
    QCOMPARE(a.trace().tensor("logits").values(), b.trace().tensor("logits").values());
    const auto random = Model::random(c.model->config, 7);
    QCOMPARE(random.parameters().size(), c.model->parameters().size());
}

void TestSeq2seq::badInputsAreClearErrors()
{
    Case c = loadSeq2SeqCase();
    Input noSource = c.input;
    noSource.source.clear();
    QVERIFY(errorFrom([&] { Engine(c.model, noSource); }).contains("the source (the encoder's input) is empty"));
    Input longSource = c.input;
    longSource.source.assign(13, 1);
    QVERIFY(errorFrom([&] { Engine(c.model, longSource); }).contains("the source (the encoder's input) has 13 tokens"));
    Input badPadding = c.input;
    badPadding.sourcePadding = {7};
    QVERIFY(errorFrom([&] { Engine(c.model, badPadding); }).contains("padding position 7"));
    QVERIFY(errorFrom([&] {
        StrategyRunner(*c.model, noSource, MemoryOptions {});
    }).contains("needs a source for its encoder"));
    Input kernel = c.input;
    kernel.attention = {{"local", {{"window", "2"}}}};
    QVERIFY(errorFrom([&] { Engine(c.model, kernel); }).contains("exact attention only"));

    const auto decoderOnly = std::make_shared<Model>(Model::load(ATLAS_TEST_DATA "/gpt2_tiny"));
    Input withSource {{1, 2, 3}, {}};
    withSource.source = {4, 5};
    QVERIFY(errorFrom([&] { Engine(decoderOnly, withSource); }).contains("a source text is for an encoder-decoder"));
}

// Lesson 12's "Train one" step, as the Train panel runs it (300 steps, batch 16, warm-up a tenth, seed 1): most
// held-out sources sorted already, and decoder layer 1's cross-attention on the letter being written. A trained outcome
// depends on the order the kernels add in, which differs between CPUs and BLAS kernels, so the bounds are set below
// every order measured (docs/benchmarks.md, "Trained outcomes across floating-point orders"): at seed 1, exact match
// 87.5 % (Zen 4, AVX-512 build), 91.8 % (the same with OpenBLAS's Haswell kernels), 94.9 % (Zen 3, AVX2 build); over
// seeds 1–6 and both kernels 87.1–92.9 %. Layer 1's heads 74.6–88.2 % at seed 1 (66.0–88.2 % over the seeds, means
// 79–84 %), layer 0's 21–34 %.
void TestSeq2seq::threeHundredStepsAlignTheCrossAttention()
{
    TrainOptions options;
    options.steps = 300;
    options.warmupSteps = 30;
    options.seed = 1;
    const std::unique_ptr<Task> task = Task::create("seq2seq-sort");
    Trainer trainer(std::make_shared<Model>(Model::random(task->modelConfig(), options.seed)), "seq2seq-sort", options);
    for (int i = 0; i < options.steps; ++i)
        trainer.step();
    const float exact = trainer.evaluate(256).exactMatch;
    QVERIFY2(exact >= 0.8, qPrintable(QString::number(exact)));
    const HeadPattern pattern = [] {
        for (const HeadPattern &p : headPatterns("seq2seq-sort"))
            if (p.name == "source letter")
                return p;
        return HeadPattern {};
    }();
    const auto mass = patternMass(trainer.snapshot(), *task, pattern, 100);
    double layerOne = 0;
    for (double m : mass[1]) {
        QVERIFY2(m >= 0.6, qPrintable(QString::number(m)));
        layerOne += m / double(mass[1].size());
    }
    QVERIFY2(layerOne >= 0.75, qPrintable(QString::number(layerOne)));
    for (double m : mass[0])
        QVERIFY2(m <= 0.4, qPrintable(QString::number(m)));
}

QTEST_GUILESS_MAIN(TestSeq2seq)
#include "tst_seq2seq.moc"
