// The KV-cache generator agrees with a full forward pass, and sampling is reproducible from its seed.
#include "engine/engine.h"
#include "engine/generator.h"
#include "engine/temperature.h"
#include "model/builtinmodels.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace atlas;

class TestGenerator : public QObject
{
    Q_OBJECT

    static std::shared_ptr<const Model> load(const char *name)
    {
        return std::make_shared<Model>(Model::load(QString(ATLAS_TEST_DATA "/%1").arg(name).toStdString()));
    }

    // max |cached - full| relative to max |full| for the logits of the last position
    static double lastRowError(const Generator &g, const std::shared_ptr<const Model> &model)
    {
        Engine engine(model, {g.tokens(), {}});
        engine.runToEnd();
        const Tensor &logits = engine.trace().tensor("logits");
        const int64_t V = logits.dim(1), last = logits.dim(0) - 1;
        double maxDiff = 0, maxRef = 0;
        for (int64_t v = 0; v < V; ++v) {
            const double ref = logits.data()[last * V + v];
            maxDiff = std::max(maxDiff, std::abs(ref - g.lastLogits().data()[v]));
            maxRef = std::max(maxRef, std::abs(ref));
        }
        return maxDiff / maxRef;
    }

private slots:
    void cachedLogitsEqualFullForward()
    {
        auto model = load("gpt2_tiny");
        Generator g(model, {3, 17, 42});
        QVERIFY(lastRowError(g, model) < 1e-5);
        for (int i = 0; i < 6; ++i) {
            g.generate();
            QCOMPARE(g.cachedPositions(), 4 + i);
            QVERIFY2(lastRowError(g, model) < 1e-5, qPrintable(QString("after %1 new tokens").arg(i + 1)));
        }
        QCOMPARE(g.cacheBytes(), size_t(2 * 2 * 9 * 32 * 4)); // K and V, 2 layers, 9 positions, 32 wide
        QCOMPARE(g.cachedKeys(1).shape(), (Shape {4, 9, 8}));
    }

    // Every built-in model that generates (causal, one stack): the cached logits of a prompt from its own sample
    // equal the whole forward pass, whatever its block arrangement (pre- or post-norm, reversible streams, RoPE,
    // ALiBi, entmax, spans, experts).
    void everyBuiltInModelCachesWhatTheForwardComputes()
    {
        int checked = 0;
        QString failed;
        for (const BuiltinModel &builtin : builtinModels()) {
            const std::shared_ptr<const Model> model = loadModel(builtin.name);
            const ModelConfig &c = model->config;
            if (!c.causal || c.isEncoderDecoder())
                continue;
            // A token routed alone always fits its experts' capacity, so a capacity-routed mixture matches the whole
            // forward pass only where that dropped nothing (docs/models.md): one token, which it never drops.
            const bool capacityRouted = c.experts > 0 && !c.droplessRouting;
            std::vector<int> prompt;
            for (int t = 0; t < std::min(c.context, capacityRouted ? 1 : 12); ++t)
                prompt.push_back((7 * t + 3) % c.vocab);
            Generator g(model, prompt);
            const double error = lastRowError(g, model);
            if (error >= 1e-4)
                failed += QString::fromStdString(builtin.name) + QString(": %1; ").arg(error);
            ++checked;
        }
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        QVERIFY(checked >= 15);
    }

    // Every family: the cache holds the K/V heads only (grouped- and multi-query attention), grows past its first
    // rows, and the cached logits equal the whole forward pass, also once Mistral's sliding window drops old keys.
    void llamaFamilyCachesOnlyItsKeyValueHeads_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("kvHeads");
        QTest::addColumn<int>("positions");
        // 73 positions: past the 3 + 64 rows the cache starts with
        QTest::newRow("llama (GQA, 2 K/V heads for 4)") << "llama_tiny" << 2 << 73;
        QTest::newRow("llama (head_dim 12 in a model 32 wide)") << "llama_hd_tiny" << 2 << 64;
        QTest::newRow("qwen2 (multi-query, 1 K/V head)") << "qwen2_tiny" << 1 << 73;
        QTest::newRow("qwen2 (a window of 3 from layer 1 on)") << "qwen2_swa_tiny" << 2 << 64;
        QTest::newRow("qwen3 (QK-norm on the new row's query and key)") << "qwen3_tiny" << 2 << 73;
        QTest::newRow("olmo2 (norms after the sub-layers, QK-norm over the projections)") << "olmo2_tiny" << 2 << 73;
        QTest::newRow("gemma2 (sandwich norms, soft-caps, a window of 3 on layers 0 and 2)")
            << "gemma2_tiny" << 2 << 64;
        QTest::newRow("gemma3 (QK-norm, local and global RoPE bases)") << "gemma3_tiny" << 2 << 64;
        QTest::newRow("smollm3 (NoPE layers 1 and 3, a window of 3 on them)") << "smollm3_tiny" << 2 << 73;
        // 64 positions: past LongRoPE's original context of 16, where every cached key turns again by the long factors
        QTest::newRow("phi3 (fused projections, partial rotary, LongRoPE)") << "phi3_tiny" << 2 << 64;
        QTest::newRow("phi3 (LongRoPE's long factors from the 5th token, a window of 5)")
            << "phi3_long_tiny" << 1 << 32;
        QTest::newRow("mistral (sliding window 4, context 64)") << "mistral_tiny" << 2 << 64;
        QTest::newRow("qwen3_moe (QK-norm, top-2 of 4 experts under mlp.experts)") << "qwen3_moe_tiny" << 2 << 64;
        QTest::newRow("mixtral (top-2 of 4 experts, nothing dropped)") << "mixtral_tiny" << 2 << 64;
        QTest::newRow("gpt_oss (sinks, YaRN, a window of 3 on layer 0, stacked clamped experts)")
            << "gpt_oss_tiny" << 2 << 73;
        QTest::newRow("gpt_neox (partial rotary, parallel residual)") << "neox_tiny" << 4 << 64;
        QTest::newRow("gpt_neox (sequential residual)") << "neox_seq_tiny" << 2 << 64;
        QTest::newRow("gpt_neo (a local layer, window 3; context 16)") << "neo_tiny" << 4 << 16;
    }
    void llamaFamilyCachesOnlyItsKeyValueHeads()
    {
        QFETCH(QString, model);
        QFETCH(int, kvHeads);
        QFETCH(int, positions);
        auto m = load(qPrintable(model));
        Generator g(m, {3, 17, 42});
        QVERIFY(lastRowError(g, m) < 1e-5);
        while (g.cachedPositions() < positions)
            g.generate();
        QVERIFY2(lastRowError(g, m) < 1e-4, qPrintable(QString::number(lastRowError(g, m))));
        const int d = m->config.headDim();
        QCOMPARE(g.cachedKeys(1).shape(), (Shape {kvHeads, positions, d}));
        QCOMPARE(g.cacheBytes(), size_t(2 * m->config.layers * positions * kvHeads * d * 4)); // K and V per layer
    }

    // An encoder-decoder: the encoder and the cross-attention keys and values once, then at every step the same logits
    // as the whole forward pass of both stacks on the decoder's tokens so far, with and without source padding.
    // The same for T5 checkpoints: RMS norms, nn.Linear cross-attention without biases or √d, the decoder's own
    // causal bucket table, v1.0's tied head scaled by d_model^−½, and v1.1's heads 36 wide in a model 32 wide.
    void anEncoderDecoderCachesItsCrossAttention_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("crossWidth"); // H·d
        QTest::addColumn<int>("decoderLayers");
        QTest::addColumn<int>("start");
        QTest::newRow("seq2seq-sort") << "seq2seq-sort" << 64 << 2 << 62; // ">"
        QTest::newRow("t5 v1.0 (ReLU, tied head)") << "t5_tiny" << 32 << 3 << 0;
        QTest::newRow("t5 v1.1 (gated GELU, 3 heads of 12)") << "t5v11_tiny" << 36 << 2 << 0;
    }
    void anEncoderDecoderCachesItsCrossAttention()
    {
        QFETCH(QString, model);
        QFETCH(int, crossWidth);
        QFETCH(int, decoderLayers);
        QFETCH(int, start);
        const bool builtin = model == "seq2seq-sort";
        const auto m = builtin ? loadModel("seq2seq-sort") : load(qPrintable(model));
        for (const std::vector<int> &padding : {std::vector<int> {}, std::vector<int> {2}}) {
            Input input;
            input.source = {100, 115, 102, 97, 99, 100, 100}; // "dsfacdd"
            if (!builtin)
                input.source = {5, 17, 42, 8, 33, 25, 63};
            input.sourcePadding = padding;
            input.tokens = {start};
            Generator g(m, input);
            QCOMPARE(g.crossPositions(), 7);
            QCOMPARE(g.crossCacheBytes(), size_t(2 * decoderLayers * 7 * crossWidth * 4)); // K and V per layer
            for (int step = 0; step < 8; ++step) {
                Input whole = input;
                whole.tokens = g.tokens();
                Engine engine(m, whole);
                engine.runToEnd();
                const Tensor &logits = engine.trace().tensor("logits");
                const int64_t V = logits.dim(1), last = logits.dim(0) - 1;
                double maxDiff = 0, maxRef = 0;
                for (int64_t v = 0; v < V; ++v) {
                    maxDiff
                        = std::max(maxDiff, double(std::abs(logits.data()[last * V + v] - g.lastLogits().data()[v])));
                    maxRef = std::max(maxRef, double(std::abs(logits.data()[last * V + v])));
                }
                QVERIFY2(maxDiff < 1e-5 * maxRef, qPrintable(QString("step %1: %2").arg(step).arg(maxDiff / maxRef)));
                g.generate();
            }
            if (builtin && padding.empty()) { // greedily, the letters sorted and the closing '.'
                const std::vector<int> &t = g.tokens();
                QCOMPARE(std::string(t.begin(), t.end()), std::string(">acdddfs."));
            }
        }
        Input noSource;
        noSource.tokens = {62};
        QVERIFY_THROWS_EXCEPTION(Error, Generator(m, noSource));
    }

    void greedyPicksTheArgmax()
    {
        auto model = load("gpt2_tiny");
        Generator g(model, {3, 17, 42});
        const float *z = g.lastLogits().data();
        const int expected = int(std::max_element(z, z + 50) - z);
        QCOMPARE(g.generate(), expected);
    }

    void samplingIsReproducibleAndRespectsTopK()
    {
        auto model = load("gpt2_tiny");
        SamplingOptions o {1.5f, 3, 42};
        Generator a(model, {1, 2}, o), b(model, {1, 2}, o);
        for (int i = 0; i < 8; ++i) {
            std::vector<float> z(a.lastLogits().data(), a.lastLogits().data() + 50);
            std::vector<float> sorted = z;
            std::sort(sorted.begin(), sorted.end(), std::greater<>());
            const int next = a.generate();
            QVERIFY(z[size_t(next)] >= sorted[2]); // among the top 3
            QCOMPARE(b.generate(), next);
        }
    }

    // Issue 63: top-p samples only from the nucleus of softmax(z / T) (after top-k), the fewest most probable tokens
    // whose probabilities reach p; a tiny p leaves the most probable alone, so sampling is then greedy.
    void samplingStaysInsideTheNucleus()
    {
        auto model = load("gpt2_tiny");
        SamplingOptions o {1.5f, 0, 7, 0.6};
        Generator a(model, {1, 2}, o), b(model, {1, 2}, o);
        for (int i = 0; i < 12; ++i) {
            const float *z = a.lastLogits().data();
            std::vector<int> order(50);
            std::iota(order.begin(), order.end(), 0);
            std::sort(order.begin(), order.end(), [z](int x, int y) { return z[x] > z[y]; });
            std::vector<double> w(50);
            for (size_t r = 0; r < w.size(); ++r)
                w[r] = std::exp((double(z[order[r]]) - double(z[order[0]])) / 1.5);
            const size_t kept = nucleusSize(w.data(), w.size(), 0.6);
            QVERIFY(kept >= 1 && kept < 50);
            const int next = a.generate();
            const size_t rank = size_t(std::find(order.begin(), order.end(), next) - order.begin());
            QVERIFY2(rank < kept, qPrintable(QStringLiteral("rank %1 of %2 kept").arg(rank).arg(kept)));
            QCOMPARE(b.generate(), next);
        }
        Generator greedy(model, {1, 2}), tiny(model, {1, 2}, {1.5f, 0, 7, 1e-9});
        for (int i = 0; i < 6; ++i)
            QCOMPARE(tiny.generate(), greedy.generate());
        const double weights[] = {4, 3, 2, 1}; // shares 0.4, 0.7, 0.9, 1
        QCOMPARE(nucleusSize(weights, 4, 0.4), size_t(1));
        QCOMPARE(nucleusSize(weights, 4, 0.41), size_t(2));
        QCOMPARE(nucleusSize(weights, 4, 0.9), size_t(3));
        QCOMPARE(nucleusSize(weights, 4, 1.0), size_t(4));
        QVERIFY_THROWS_EXCEPTION(Error, nucleusSize(weights, 4, 0.0));
    }

    // The next-token view's bars at temperature T are softmax(z / T), computed from the traced softmax(z) alone.
    void temperatureReshapesTheTracedDistribution()
    {
        const auto model = load("gpt2_tiny");
        Engine engine(model, {{1, 2, 3, 4}, {}});
        engine.runToEnd();
        const Tensor &logits = engine.trace().tensor("logits");
        const Tensor &probs = engine.trace().tensor("next_probs");
        const int V = int(logits.dim(1));
        const int64_t last = logits.dim(0) - 1;
        for (double t : {0.1, 0.5, 1.0, 2.0, 10.0}) {
            const float *z = logits.data() + last * V;
            const std::vector<double> shown = atTemperature(probs.data() + last * V, V, t);
            double top = -INFINITY, sum = 0;
            for (int v = 0; v < V; ++v)
                top = std::max(top, double(z[v]));
            for (int v = 0; v < V; ++v)
                sum += std::exp((double(z[v]) - top) / t);
            double worst = 0;
            for (int v = 0; v < V; ++v)
                worst = std::max(worst, std::abs(shown[size_t(v)] - std::exp((double(z[v]) - top) / t) / sum));
            QVERIFY2(worst < 1e-5, qPrintable(QStringLiteral("T=%1: max error %2").arg(t).arg(worst)));
        }
        QVERIFY_THROWS_EXCEPTION(Error, atTemperature(probs.data(), V, 0.0));
        QVERIFY_THROWS_EXCEPTION(Error, atTemperature(probs.data(), V, -1.0));
    }

    void refusesBidirectionalModelsAndAFullContext()
    {
        QVERIFY_THROWS_EXCEPTION(Error, Generator(load("variant"), {1, 2}));
        auto model = load("gpt2_tiny"); // context 16
        Generator g(model, std::vector<int>(15, 1));
        g.generate();
        QVERIFY_THROWS_EXCEPTION(Error, g.generate());
    }

    // A prompt that cannot fit (too long, an id outside the vocabulary at its end) is refused before it is run.
    void checksThePromptBeforeRunningIt()
    {
        auto model = load("gpt2_tiny"); // context 16
        try {
            Generator(model, std::vector<int>(17, 1));
            QFAIL("a prompt longer than the context was accepted");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("the prompt has 17 tokens"), e.what());
        }
        std::vector<int> prompt(10, 1);
        prompt.back() = model->config.vocab;
        try {
            Generator(model, prompt);
            QFAIL("a prompt with a token outside the vocabulary was accepted");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains("prompt token id"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestGenerator)
#include "tst_generator.moc"
