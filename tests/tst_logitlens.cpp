// The logit lens (analysis/logitlens.h): every row against a PyTorch computation from its definition
// (tests/tools/make_lens_reference.py) for a Llama, a GPT-NeoX, a BERT and a T5 checkpoint; its last row equal to the
// engine's own logits on every built-in model's layout (reversible, encoder-decoder, post-LN included); rows only as
// far as the stepper has run; the top tokens, their probabilities, the entropy and a target's rank as defined. Early
// exit (analysis/earlyexit.h): both rules as their papers define them on a lens written by hand, and on a real model.
#include "analysis/earlyexit.h"
#include "analysis/logitlens.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "io/npy.h"
#include "model/builtinmodels.h"
#include "referencetesting.h"
#include "tensortesting.h"
#include "testbundle.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>

using namespace atlas;
using namespace atlas::testing;
using atlas::testing::compareToReference;
using atlas::testing::errorFrom;
using atlas::testing::intList;

namespace {

// The lens with every row's logits kept.
struct Lensed
{
    LogitLens lens;
    std::map<int, Tensor> logits;
};

Lensed lensOf(const Model &model, const Engine &engine, const Input &input, LogitLensOptions options = {})
{
    Lensed out;
    options.onLogits = [&out](int row, const Tensor &z) {
        Tensor copy(z.shape());
        std::copy(z.data(), z.data() + z.numel(), copy.data());
        out.logits[row] = std::move(copy);
    };
    out.lens = logitLens(model, engine.program(), engine.trace(), input, options);
    return out;
}

} // namespace

class TestLogitLens : public QObject
{
    Q_OBJECT

private slots:
    void everyRowMatchesPyTorch_data()
    {
        QTest::addColumn<QString>("model");
        for (const char *m : {"llama_tiny", "neox_tiny", "bert_mlm_tiny", "t5_tiny"})
            QTest::newRow(m) << QString(m);
    }

    void everyRowMatchesPyTorch()
    {
        QFETCH(QString, model);
        const auto m = std::make_shared<const Model>(Model::load(dataPath(model).toStdString()));
        const Input input = familyReferenceInput(model);
        Engine engine(m, input);
        engine.runToEnd();
        const Lensed got = lensOf(*m, engine, input);
        const int layers = m->config.layers;
        QCOMPARE(got.lens.rows(), layers + 1);
        for (int row = 0; row <= layers; ++row) {
            QCOMPARE(got.lens.blocks[size_t(row)], row);
            const Tensor want
                = readNpy(dataPath("lens/" + model + "/lens." + QString::number(row) + ".logits.npy").toStdString());
            const QString diff = compareToReference(QString("%1 row %2").arg(model).arg(row), got.logits.at(row), want,
                m->config.family == Family::Bert ? 2e-3 : 2e-5);
            QVERIFY2(diff.isEmpty(), qPrintable(diff));
        }
        // The last row reads the stream the head reads: the model's own logits, bit for bit.
        const Tensor &logits = engine.trace().tensor("logits");
        QVERIFY(std::equal(logits.data(), logits.data() + logits.numel(), got.logits.at(layers).data()));
    }

    // Every layout of the built-in models (pre- and post-LN, RoPE, ALiBi, experts, reversible streams, an
    // encoder-decoder's decoder): the last row is the engine's logits exactly, and the top token is its argmax.
    void lastRowIsTheModelsOwnPrediction_data()
    {
        QTest::addColumn<QString>("model");
        for (const char *m : {"reverse", "reverse-rev", "seq2seq-sort", "austen-mlm", "austen-switch", "tiny-bytes"})
            QTest::newRow(m) << QString(m);
    }

    void lastRowIsTheModelsOwnPrediction()
    {
        QFETCH(QString, model);
        const std::shared_ptr<const Model> m = loadModel(model.toStdString());
        Input input;
        input.tokens = {5, 9, 12, 7, 3, 11};
        if (m->config.isEncoderDecoder())
            input.source = {4, 8, 6, 10};
        Engine engine(m, input);
        engine.runToEnd();
        const Lensed got = lensOf(*m, engine, input, {.topK = 3});
        const int L = got.lens.rows() - 1;
        QCOMPARE(L, m->config.layers);
        const Tensor &logits = engine.trace().tensor("logits");
        QVERIFY(std::equal(logits.data(), logits.data() + logits.numel(), got.logits.at(L).data()));
        const Tensor &probs = engine.trace().tensor("next_probs");
        const int V = int(logits.dim(1));
        for (int t = 0; t < got.lens.tokens; ++t) {
            const float *z = logits.data() + size_t(t) * size_t(V);
            QCOMPARE(got.lens.topId(L, t), int(std::max_element(z, z + V) - z));
            QVERIFY(
                std::abs(got.lens.topProb(L, t) - probs.data()[size_t(t) * size_t(V) + size_t(got.lens.topId(L, t))])
                < 1e-5);
        }
    }

    // The stepper part way: rows for the streams computed so far, and none before the embedding.
    void rowsFollowTheStepper()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse");
        const Input input {{5, 9, 12, 7, 3}, {}};
        Engine engine(m, input);
        QVERIFY(!logitLensProblem(m->config, engine.program(), engine.trace()).empty());
        QVERIFY(errorFrom([&] { (void)logitLens(*m, engine.program(), engine.trace(), input); }).contains("step past"));
        engine.runTo(engine.program().producerOf(names::residualStream(1)) + 1); // through the first block
        const LogitLens lens = logitLens(*m, engine.program(), engine.trace(), input);
        QCOMPARE(lens.rows(), 2);
        QCOMPARE(QString::fromStdString(lens.streams[1]), QString("layer.0.out"));
    }

    // Each cell as defined: top-k by probability, their probabilities from the softmax, the entropy −Σ p log p, a
    // target's probability and rank (1 + the tokens more probable).
    void cellsAreWhatTheyClaim()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse");
        const Input input {{5, 9, 12, 7, 3}, {}};
        Engine engine(m, input);
        engine.runToEnd();
        const int target = 7;
        const Lensed got = lensOf(*m, engine, input, {.topK = 4, .target = target});
        const int V = got.lens.vocab;
        for (int row = 0; row < got.lens.rows(); ++row)
            for (int t = 0; t < got.lens.tokens; ++t) {
                const float *z = got.logits.at(row).data() + size_t(t) * size_t(V);
                std::vector<double> p(static_cast<size_t>(V));
                const double top = *std::max_element(z, z + V);
                double sum = 0;
                for (int v = 0; v < V; ++v)
                    sum += (p[size_t(v)] = std::exp(z[v] - top));
                double entropy = 0;
                for (double &x : p) {
                    x /= sum;
                    entropy -= x > 0 ? x * std::log(x) : 0;
                }
                const size_t cell = size_t(row) * size_t(got.lens.tokens) + size_t(t);
                QVERIFY(std::abs(got.lens.entropy[cell] - entropy) < 1e-4);
                for (int k = 0; k < 4; ++k) {
                    QVERIFY(std::abs(got.lens.topProb(row, t, k) - p[size_t(got.lens.topId(row, t, k))]) < 1e-6);
                    if (k > 0)
                        QVERIFY(got.lens.topProb(row, t, k) <= got.lens.topProb(row, t, k - 1));
                }
                QVERIFY(std::abs(got.lens.targetProb[cell] - p[size_t(target)]) < 1e-6);
                const int above
                    = int(std::count_if(p.begin(), p.end(), [&](double x) { return x > p[size_t(target)]; }));
                QCOMPARE(got.lens.targetRank[cell], above + 1);
            }
    }

    // Three blocks, three positions, by hand. Predictions per block (rows) and position, and their confidences:
    //   block 1: 4 4 7    0.30 0.95 0.50
    //   block 2: 4 5 7    0.60 0.40 0.55
    //   block 3: 4 5 8    0.90 0.70 0.45
    // Confidence θ = 0.5 stops them after blocks 2, 1 and 1; θ = 0.8 after 3, 1 and 3 (none reaches it: the last).
    // Patience t = 1 (PABEE: the prediction unchanged once): after 2, 3 and 2; t = 2: after 3, 3 and 3.
    void exitRulesStopWhereTheirPapersSay()
    {
        LogitLens lens;
        lens.tokens = 3;
        lens.topK = 1;
        lens.blocks = {0, 1, 2, 3};
        lens.streams = {"input", "layer.0.out", "layer.1.out", "layer.2.out"};
        lens.topIds = {1, 1, 1, 4, 4, 7, 4, 5, 7, 4, 5, 8};
        lens.topProbs = {0.1f, 0.1f, 0.1f, 0.30f, 0.95f, 0.50f, 0.60f, 0.40f, 0.55f, 0.90f, 0.70f, 0.45f};
        ModelConfig decoder; // causal, one stack
        decoder.layers = 3;
        ModelConfig encoder = decoder;
        encoder.causal = false;
        const EarlyExit e = earlyExit(lens, decoder, {2, 4, 5});
        QCOMPARE(e.exitBlocks(ExitRule::Confidence, 0.5), (std::vector<int> {2, 1, 1}));
        QCOMPARE(e.exitBlocks(ExitRule::Confidence, 0.8), (std::vector<int> {3, 1, 3}));
        QCOMPARE(e.exitBlocks(ExitRule::Patience, 1), (std::vector<int> {2, 3, 2}));
        QCOMPARE(e.exitBlocks(ExitRule::Patience, 2), (std::vector<int> {3, 3, 3}));
        QCOMPARE(e.target, (std::vector<int> {4, 5, -1}));
        // θ = 0.5: predictions 4, 4, 7 against the whole model's 4, 5, 8; targets 4, 5 for the first two.
        const EarlyExitPoint half = e.measure(ExitRule::Confidence, 0.5);
        QCOMPARE(half.meanLayers, 4.0 / 3.0);
        QCOMPARE(half.agreement, 1.0 / 3.0);
        QCOMPARE(half.accuracy, 0.5);
        QCOMPARE(e.fullAccuracy, 1.0);
        QCOMPARE(e.confidenceCurve.size(), size_t(20));
        QCOMPARE(e.patienceCurve.size(), size_t(2));
        QCOMPARE(e.patienceCurve[0].meanLayers, 7.0 / 3.0);
        QVERIFY(earlyExit(lens, encoder, {2, 4, 5}).fullAccuracy < 0); // not causal: nothing scored
        lens.blocks = {0, 1, 1, 3};
        QVERIFY(errorFrom([&] { (void)earlyExit(lens, decoder, {2, 4, 5}); }).contains("after block 2"));
    }

    // On a trained model: the blocks run grow with θ and with t, the last setting that stops nothing early is the whole
    // model (every prediction its own), and each block's prediction is the lens's.
    void exitSweepsFollowTheLens()
    {
        const std::shared_ptr<const Model> m = loadModel("austen");
        const Input input {{40, 73, 1, 70, 74, 1, 56, 1, 75, 73, 76, 75, 63, 1, 59, 68}, {}};
        Engine engine(m, input);
        QVERIFY(!earlyExitProblem(m->config, engine.program(), engine.trace()).empty());
        engine.runToEnd();
        QVERIFY(earlyExitProblem(m->config, engine.program(), engine.trace()).empty());
        const LogitLens lens = logitLens(*m, engine.program(), engine.trace(), input, {.topK = 1});
        const EarlyExit e = earlyExit(lens, m->config, input.tokens);
        for (size_t i = 1; i < e.confidenceCurve.size(); ++i)
            QVERIFY(e.confidenceCurve[i].meanLayers >= e.confidenceCurve[i - 1].meanLayers);
        for (size_t i = 1; i < e.patienceCurve.size(); ++i)
            QVERIFY(e.patienceCurve[i].meanLayers >= e.patienceCurve[i - 1].meanLayers);
        const EarlyExitPoint whole = e.measure(ExitRule::Confidence, 2.0);
        QCOMPARE(whole.meanLayers, double(m->config.layers));
        QCOMPARE(whole.agreement, 1.0);
        const Tensor &probs = engine.trace().tensor("next_probs");
        const int V = int(probs.dim(1));
        int correct = 0;
        for (int t = 0; t < e.tokens; ++t) {
            QCOMPARE(e.predictionAt(m->config.layers, t), lens.topId(lens.rows() - 1, t));
            const float *p = probs.data() + size_t(t) * size_t(V);
            if (t + 1 < e.tokens)
                correct += int(std::max_element(p, p + V) - p) == input.tokens[size_t(t) + 1];
        }
        QCOMPARE(e.fullAccuracy, double(correct) / (e.tokens - 1));
    }
};

QTEST_GUILESS_MAIN(TestLogitLens)
#include "tst_logitlens.moc"
