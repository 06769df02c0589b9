// Positional encodings (docs/models.md, "Positions") against independent PyTorch references
// (tests/tools/make_positions_reference.py wrote tests/data/positions): RoPE in both conventions, ALiBi, T5's
// buckets (causal and bidirectional), Shaw et al.'s relative keys, and none. For each: every traced tensor of the
// forward pass, the loss and every parameter's gradient; the KV-cached generator against the full forward; the
// memory strategies against plain backprop. Tolerance as tst_backprop: max |diff| <= 1e-4 x max |ref|.
#include "engine/engine.h"
#include "engine/generator.h"
#include "io/npy.h"
#include "model/model.h"
#include "ops/ops.h"
#include "positions/positionprofile.h"
#include "referencetesting.h"
#include "testbundle.h"
#include "train/backprop.h"
#include "train/strategyrunner.h"
#include "util/error.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>
#include <memory>

using namespace atlas;
using namespace atlas::testing;
using testing::intList;

namespace {

QString positionsDataPath(const QString &relative)
{
    return QStringLiteral(ATLAS_TEST_DATA "/positions/") + relative;
}

using Case = testing::ReferenceCase;

Case loadPositionsCase(const QString &name)
{
    return testing::loadReferenceCase("positions", name);
}

void addPositionsCases()
{
    QTest::addColumn<QString>("name");
    for (const char *name :
        {"rope", "rope-half", "alibi", "t5", "t5-bidirectional", "shaw", "none", "sinusoidal-scaled"})
        QTest::newRow(name) << QString(name);
}

// The reference tensors of one kind: (trace name, tensor), without the loss and the gradients.
std::vector<std::pair<std::string, Tensor>> referenceTrace(const QString &name, const QString &prefix = {})
{
    std::vector<std::pair<std::string, Tensor>> out;
    const QDir dir(positionsDataPath(name + "_ref"));
    for (const QString &file : dir.entryList({"*.npy"}, QDir::Files, QDir::Name)) {
        const QString tensor = file.chopped(4);
        const bool isGrad = tensor.startsWith("grad.") || tensor == "loss";
        if (prefix.isEmpty() ? !isGrad : tensor.startsWith(prefix))
            out.emplace_back(tensor.toStdString(), readNpy(dir.filePath(file).toStdString()));
    }
    return out;
}

} // namespace

class TestPositions : public QObject
{
    Q_OBJECT

private slots:
    // The Positions view says which convention a GGUF file keeps RoPE's pairs in: the llama architecture's files
    // hold q and k permuted for adjacent pairs, put back when read; the others rotate-half, as the engine does.
    void theFormulaSaysHowTheGgufFileKeepsItsPairs()
    {
        for (const auto &[file, paired] : {std::pair {"llama_tiny-f32.gguf", true}, {"qwen2_tiny-f32.gguf", false},
                 {"smollm3_tiny-f32.gguf", true}}) {
            auto model
                = std::make_shared<const Model>(Model::load(ATLAS_TEST_DATA "/gguf/models/" + std::string(file)));
            Engine engine(model, Input {{1, 2, 3}, {}});
            engine.runToEnd();
            const std::string formula = positionProfile(*model, engine.trace(), 3, 0, 0).formula;
            QVERIFY2(formula.find(paired ? "pairs (x₂ⱼ, x₂ⱼ₊₁), llama.cpp's convention" : "llama.cpp's NeoX convention")
                    != std::string::npos,
                formula.c_str());
        }
    }

    void forwardMatchesPyTorch_data() { addPositionsCases(); }
    void forwardMatchesPyTorch()
    {
        QFETCH(QString, name);
        const Case c = loadPositionsCase(name);
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const auto reference = referenceTrace(name);
        QVERIFY(reference.size() >= 10);
        for (const auto &[tensor, want] : reference) {
            const TraceEntry *got = engine.trace().find(tensor);
            QVERIFY2(got, qPrintable(QString::fromStdString(tensor) + " is not in the trace"));
            const QString why = testing::compareToReference(QString::fromStdString(tensor), got->tensor, want, kRelTol);
            QVERIFY2(why.isEmpty(), qPrintable(why));
        }
    }

    void gradientsMatchPyTorch_data() { addPositionsCases(); }
    void gradientsMatchPyTorch()
    {
        QFETCH(QString, name);
        const Case c = loadPositionsCase(name);
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const Gradients g = backward(*c.model, c.input, engine.trace(), c.targets);
        const Tensor loss = readNpy(positionsDataPath(name + "_ref/loss.npy").toStdString());
        QVERIFY2(std::fabs(g.loss - loss.data()[0]) <= 1e-4 * std::fabs(loss.data()[0]),
            qPrintable(QString("loss %1, PyTorch %2").arg(g.loss).arg(loss.data()[0])));
        const auto reference = referenceTrace(name, "grad.");
        QCOMPARE(reference.size(), c.model->parameters().size()); // every parameter, the position tables too
        const std::map<std::string, Tensor> stored = gradientsAsStored(*c.model, g);
        for (const auto &[tensor, want] : reference) {
            const std::string parameter = tensor.substr(5);
            QVERIFY2(stored.count(parameter), parameter.c_str());
            const QString why
                = testing::compareToReference(QString::fromStdString(tensor), stored.at(parameter), want, kRelTol);
            QVERIFY2(why.isEmpty(), qPrintable(why));
        }
    }

    // The generator caches keys (rotated by their own position for RoPE) and adds the position term for one query
    // at a time: its logits must be the full forward's, position by position.
    void cachedGenerationMatchesTheForwardPass_data() { addPositionsCases(); }
    void cachedGenerationMatchesTheForwardPass()
    {
        QFETCH(QString, name);
        const Case c = loadPositionsCase(name);
        if (!c.model->config.causal)
            QSKIP("generation needs a causal model");
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const Tensor &logits = engine.trace().tensor("logits");
        const int64_t V = logits.dim(1);
        for (size_t n = 1; n <= c.input.tokens.size(); ++n) {
            const Generator generator(c.model, std::vector<int>(c.input.tokens.begin(), c.input.tokens.begin() + n));
            Tensor row({V});
            std::copy(logits.data() + (n - 1) * V, logits.data() + n * V, row.data());
            const QString why = testing::compareToReference(
                QString("logits after %1 tokens").arg(n), generator.lastLogits(), row, kRelTol);
            QVERIFY2(why.isEmpty(), qPrintable(why));
        }
    }

    // Checkpointing recomputes the rotation and the position term: the gradients keep every bit.
    void memoryStrategiesKeepEveryBit_data() { addPositionsCases(); }
    void memoryStrategiesKeepEveryBit()
    {
        QFETCH(QString, name);
        const Case c = loadPositionsCase(name);
        const auto run = [&](MemoryStrategy strategy) {
            MemoryOptions options;
            options.strategy = strategy;
            options.checkpointEvery = 1;
            StrategyRunner runner(*c.model, c.input, options);
            runner.forward();
            Gradients g;
            runner.backward(c.targets, g);
            return g;
        };
        const Gradients plain = run(MemoryStrategy::Plain), checkpoint = run(MemoryStrategy::Checkpoint);
        QCOMPARE(checkpoint.loss, plain.loss);
        // The trainer's path (a strategy runner, not a traced run) agrees with PyTorch too.
        const std::map<std::string, Tensor> stored = gradientsAsStored(*c.model, plain);
        for (const auto &[tensor, want] : referenceTrace(name, "grad.")) {
            const QString why = testing::compareToReference(
                QString::fromStdString(tensor), stored.at(tensor.substr(5)), want, kRelTol);
            QVERIFY2(why.isEmpty(), qPrintable(why));
        }
        for (const auto &[parameter, grad] : plain.grads)
            QVERIFY2(std::equal(grad.data(), grad.data() + grad.numel(), checkpoint.grads.at(parameter).data()),
                parameter.c_str());
    }

    // Without positions, attention is a function of the set of tokens: a bidirectional model's output rows
    // move with its input rows.
    void withoutPositionsPermutingTheInputPermutesTheOutput()
    {
        const Case c = loadPositionsCase("none");
        std::vector<int> permuted = c.input.tokens;
        std::reverse(permuted.begin(), permuted.end());
        std::rotate(permuted.begin(), permuted.begin() + 3, permuted.end());
        Engine a(c.model, c.input), b(c.model, Input {permuted, {}});
        a.runToEnd();
        b.runToEnd();
        const Tensor &la = a.trace().tensor("logits"), &lb = b.trace().tensor("logits");
        const int64_t T = la.dim(0), V = la.dim(1);
        for (int64_t i = 0; i < T; ++i) {
            const int64_t j = std::find(permuted.begin(), permuted.end(), c.input.tokens[size_t(i)]) - permuted.begin();
            for (int64_t v = 0; v < V; ++v)
                QVERIFY(std::fabs(la.data()[i * V + v] - lb.data()[j * V + v]) <= 1e-4f);
        }
        // With RoPE the same permutation changes the outputs: the positions are felt.
        const Case rope = loadPositionsCase("rope");
        Model bidirectional = *rope.model;
        bidirectional.config.causal = false;
        const auto model = std::make_shared<Model>(bidirectional);
        Engine ra(model, c.input), rb(model, Input {permuted, {}});
        ra.runToEnd();
        rb.runToEnd();
        const Tensor &x = ra.trace().tensor("logits"), &y = rb.trace().tensor("logits");
        const int64_t j0 = std::find(permuted.begin(), permuted.end(), c.input.tokens[0]) - permuted.begin();
        double moved = 0;
        for (int64_t v = 0; v < V; ++v)
            moved = std::max(moved, double(std::fabs(x.data()[v] - y.data()[j0 * V + v])));
        QVERIFY2(moved > 1e-2, qPrintable(QString::number(moved)));
    }

    void alibiSlopesFollowThePaper()
    {
        const std::vector<float> eight = ops::alibiSlopes(8);
        for (int h = 0; h < 8; ++h)
            QCOMPARE(eight[size_t(h)], std::pow(2.0f, -float(h + 1))); // 1/2, 1/4, …, 1/256
        // 12 heads: the 8-head slopes, then every other 16-head slope: 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
        const std::vector<float> twelve = ops::alibiSlopes(12);
        QCOMPARE(twelve.size(), size_t(12));
        for (int h = 0; h < 4; ++h)
            QCOMPARE(twelve[size_t(8 + h)], std::pow(2.0f, -0.5f - float(h)));
    }

    void ropeTurnsEachPairByItsAngleAndKeepsItsLength()
    {
        Tensor x({1, 3, 4});
        for (int64_t i = 0; i < x.numel(); ++i)
            x.data()[i] = float(i % 5) - 1.5f;
        for (const ops::RopeStyle style : {ops::RopeStyle::Interleaved, ops::RopeStyle::RotateHalf}) {
            Tensor y(x.shape());
            ops::rope_forward(y, x, 0, style, ops::ropeFrequencies(4, 10000.0f));
            for (int t = 0; t < 3; ++t) { // a rotation keeps each row's norm; position 0 is not turned
                const double nx = Eigen::Map<const Eigen::VectorXf>(x.data() + t * 4, 4).norm();
                const double ny = Eigen::Map<const Eigen::VectorXf>(y.data() + t * 4, 4).norm();
                QVERIFY(std::fabs(nx - ny) < 1e-5);
                if (t == 0)
                    QVERIFY(std::equal(x.data(), x.data() + 4, y.data()));
            }
            // R(t)x · R(s)y depends on t − s only: the score of a pair at distance 1, at positions (1,0) and (2,1)
            Tensor rotated(x.shape());
            ops::rope_forward(rotated, x, 0, style, ops::ropeFrequencies(4, 10000.0f));
            Tensor shifted({1, 3, 4});
            for (int t = 0; t < 3; ++t)
                std::copy(x.data(), x.data() + 4, shifted.data() + t * 4); // one vector at positions 0, 1, 2
            Tensor r(shifted.shape());
            ops::rope_forward(r, shifted, 0, style, ops::ropeFrequencies(4, 10000.0f));
            const auto row = [&](int t) { return Eigen::Map<const Eigen::VectorXf>(r.data() + t * 4, 4); };
            QVERIFY(std::fabs(row(1).dot(row(0)) - row(2).dot(row(1))) < 1e-5);
        }
    }

    // What the Positions view draws, from the same runs.
    void profilesShowWhatTheEngineComputes()
    {
        for (const char *name : {"rope", "alibi", "t5", "shaw", "none"}) {
            const Case c = loadPositionsCase(name);
            Engine engine(c.model, c.input);
            engine.runToEnd();
            const int T = int(c.input.tokens.size()), H = c.model->config.heads;
            const PositionProfile p = positionProfile(*c.model, engine.trace(), T, 1, 2);
            QCOMPARE(p.kind, c.model->config.positions);
            QVERIFY(!p.formula.empty());
            if (p.kind == PositionKind::None) {
                QVERIFY(p.encoding.empty());
                continue;
            }
            if (p.kind == PositionKind::Rope) {
                const int64_t d = c.model->config.headDim();
                QCOMPARE(p.encoding.shape(), (Shape {T, d / 2}));
                QCOMPARE(p.wavelengths.size(), size_t(d / 2));
                QVERIFY(std::fabs(p.wavelengths[0] - 2 * M_PI) < 1e-9); // θ₀ = 1: one turn every 2π positions
                for (int t = 1; t < T; ++t) // a function of t − s only
                    QVERIFY(std::fabs(p.similarity.data()[t * T + t - 1] - p.similarity.data()[T + 0]) < 1e-5);
                // The drawn pairs: the last query and the key it attends to most, each turned by position·θ.
                QCOMPARE(p.query, T - 1);
                const Tensor &probs = engine.trace().tensor("layer.1.attn.probs");
                const float *row = probs.data() + (2 * T + p.query) * T;
                QCOMPARE(p.key, int(std::max_element(row, row + T) - row));
                QCOMPARE(p.rotatedPairs.size(), size_t(4));
                for (const PositionProfile::RotatedPair &r : p.rotatedPairs)
                    for (const auto &[before, after, position] :
                        {std::tuple {r.q, r.qRot, p.query}, std::tuple {r.k, r.kRot, p.key}}) {
                        const double a = position * r.theta;
                        QVERIFY(std::fabs(after[0] - (before[0] * std::cos(a) - before[1] * std::sin(a))) < 1e-4);
                        QVERIFY(std::fabs(after[1] - (before[0] * std::sin(a) + before[1] * std::cos(a))) < 1e-4);
                    }
                // The same pairs from a run that keeps its attention on demand (the query's row recomputed).
                EngineOptions lazy;
                lazy.attention = EngineOptions::Attention::OnDemand;
                Engine onDemand(c.model, c.input, lazy);
                onDemand.runToEnd();
                QVERIFY(!onDemand.trace().contains("layer.1.attn.probs"));
                const PositionProfile o
                    = positionProfile(*c.model, onDemand.trace(), T, 1, 2, -1, names::kOnlyStack, c.input.padding);
                QCOMPARE(o.key, p.key);
                QCOMPARE(o.rotatedPairs.size(), p.rotatedPairs.size());
                for (size_t i = 0; i < p.rotatedPairs.size(); ++i)
                    QVERIFY(std::fabs(o.rotatedPairs[i].kRot[1] - p.rotatedPairs[i].kRot[1]) < 1e-6);
                continue;
            }
            // The score term is the trace's, for the chosen layer and head.
            const Tensor &bias = engine.trace().tensor("layer.1.attn.bias");
            QVERIFY(std::equal(p.encoding.data(), p.encoding.data() + T * T, bias.data() + 2 * T * T));
            if (p.kind == PositionKind::Alibi) {
                const std::vector<float> m = ops::alibiSlopes(H);
                for (int h = 0; h < H; ++h)
                    QCOMPARE(p.biasByDistance[size_t(h)][4], -double(m[size_t(h)]) * 4);
            }
            if (p.kind == PositionKind::T5) // distance d behind the query: the same cell as query d, key 0
                for (int h = 0; h < H; ++h)
                    for (int d = 0; d < T; ++d)
                        QCOMPARE(float(p.biasByDistance[size_t(h)][size_t(d)]), bias.data()[(h * T + d) * T]);
        }
        // Sinusoidal: the wavelengths of Vaswani et al., 2π·10000^(2i/D).
        const Model sinusoidal = loadPositionsCase("rope").model->withPositions(PositionKind::Sinusoidal, "test");
        Engine engine(std::make_shared<Model>(sinusoidal), Input {{1, 2, 3}, {}});
        engine.runToEnd();
        const PositionProfile p = positionProfile(sinusoidal, engine.trace(), 3, 0, 0);
        const int D = sinusoidal.config.dModel;
        QCOMPARE(p.wavelengths.size(), size_t(D / 2));
        QVERIFY(std::fabs(p.wavelengths[1] - 2 * M_PI * std::pow(10000.0, 2.0 / D)) < 1e-6);
        for (int t = 0; t < 3; ++t)
            QVERIFY(std::fabs(p.similarity.data()[t * 3 + t] - 1.0f) < 1e-6);
    }

    // Gemma 3's windowed layers turn with rope_local_base_freq (100 in gemma3_tiny) and no scaling, its global layer 2
    // with rope_theta (10000) and linear rope_scaling (÷ 2): the Positions view's wavelengths and formula are the
    // layer's own.
    void gemma3LayersTurnWithTheirOwnBase()
    {
        const Model m = Model::load(ATLAS_TEST_DATA "/gemma3_tiny");
        Engine engine(std::make_shared<Model>(m), Input {{3, 17, 42, 8, 0, 25, 63, 11}, {}});
        engine.runToEnd();
        const int d = m.config.headDim();
        const PositionProfile local = positionProfile(m, engine.trace(), 8, 1, 0),
                              global = positionProfile(m, engine.trace(), 8, 2, 0);
        QVERIFY(std::fabs(local.wavelengths[1] - 2 * M_PI * std::pow(100.0, 2.0 / d)) < 1e-3 * local.wavelengths[1]);
        QVERIFY(std::fabs(global.wavelengths[1] - 2 * 2 * M_PI * std::pow(10000.0, 2.0 / d))
            < 1e-3 * global.wavelengths[1]);
        QVERIFY2(local.formula.find("100^(−2j/d)") != std::string::npos
                && local.formula.find("rope_local_base_freq") != std::string::npos,
            local.formula.c_str());
        QVERIFY2(global.formula.find("10000^(−2j/d) / 2 (rope_scaling linear)") != std::string::npos,
            global.formula.c_str());
    }

    // SmolLM3's NoPE layers (1 and 3 in smollm3_tiny) do not turn q and k: no rotate operation, scores of the
    // projected q and k, and a Positions profile that says so; its other layers turn as any RoPE model's.
    void smolLM3NoPELayersTurnNothing()
    {
        const Model m = Model::load(ATLAS_TEST_DATA "/smollm3_tiny");
        Engine engine(std::make_shared<Model>(m), Input {{3, 17, 42, 8, 0, 25, 63, 11}, {}});
        engine.runToEnd();
        QVERIFY(engine.trace().contains("layer.0.attn.q_rot"));
        QVERIFY(!engine.trace().contains("layer.1.attn.q_rot"));
        QVERIFY(!engine.trace().contains("layer.3.attn.k_rot"));
        QVERIFY(engine.program().indexOf("layer.0.rotate") >= 0);
        QCOMPARE(engine.program().indexOf("layer.1.rotate"), -1);
        const PositionProfile nope = positionProfile(m, engine.trace(), 8, 1, 0),
                              turned = positionProfile(m, engine.trace(), 8, 2, 0);
        QVERIFY(nope.nopeLayer);
        QVERIFY(nope.encoding.empty());
        QVERIFY2(nope.formula.find("NoPE") != std::string::npos, nope.formula.c_str());
        QVERIFY(!turned.nopeLayer);
        QCOMPARE(turned.kind, PositionKind::RopeHalf);
        QVERIFY(!turned.rotatedPairs.empty());
    }

    // A partial rotary turns the first r dimensions of each head: the profile draws those r/2 pairs (GPT-NeoX's 2 of
    // 4, Phi-3's 3 of 4), each rotated pair the query's dimensions (j, j + r/2); Phi-3's LongRoPE says which factors
    // the text turns by and the amplitude.
    void aPartialRotaryDrawsOnlyTheTurnedPairs_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("pairs");
        QTest::addColumn<QString>("named");
        QTest::newRow("gpt_neox, rotary_pct 0.5") << "neox_tiny" << 2 << "^(−2j/r)";
        QTest::newRow("phi3, 0.75, LongRoPE past its original 4 positions")
            << "phi3_long_tiny" << 3 << "LongRoPE's long factors (8 > 4 positions); cos and sin × 1.58114";
        QTest::newRow("phi3, 0.5, LongRoPE within its original 16") << "phi3_tiny" << 2 << "short factors (8 ≤ 16";
    }
    void aPartialRotaryDrawsOnlyTheTurnedPairs()
    {
        QFETCH(QString, model);
        QFETCH(int, pairs);
        QFETCH(QString, named);
        const Model m = Model::load(std::string(ATLAS_TEST_DATA "/") + model.toStdString());
        Engine engine(std::make_shared<Model>(m), Input {{3, 17, 42, 8, 0, 25, 63, 11}, {}});
        engine.runToEnd();
        const PositionProfile p = positionProfile(m, engine.trace(), 8, 1, 0);
        QCOMPARE(p.encoding.dim(1), int64_t(pairs));
        QCOMPARE(p.wavelengths.size(), size_t(pairs));
        QCOMPARE(p.rotatedPairs.size(), size_t(pairs));
        QVERIFY2(p.formula.find(named.toStdString()) != std::string::npos, p.formula.c_str());
        const Tensor &q = engine.trace().tensor("layer.1.attn.q"),
                     &turned = engine.trace().tensor("layer.1.attn.q_rot");
        const int64_t d = q.dim(2);
        const float *row = q.data() + int64_t(p.query) * d, *rowTurned = turned.data() + int64_t(p.query) * d;
        for (int j = 0; j < pairs; ++j) {
            QCOMPARE(p.rotatedPairs[size_t(j)].q[1], double(row[j + pairs]));
            QCOMPARE(p.rotatedPairs[size_t(j)].qRot[1], double(rowTurned[j + pairs]));
        }
    }

    void modelsThatCannotRunSaySo()
    {
        QString message;
        try {
            ModelConfig::fromJson(
                R"({"n_layer": 1, "n_head": 4, "n_embd": 12, "vocab_size": 256, "atlas_positions": "rope"})", "c.json");
        } catch (const Error &e) {
            message = e.what();
        }
        QVERIFY2(message.contains("c.json") && message.contains("must be even"), qPrintable(message));
        try {
            ModelConfig::fromJson(R"({"atlas_positions": "rotary"})", "c.json");
        } catch (const Error &e) {
            message = e.what();
        }
        QVERIFY2(message.contains("unknown kind 'rotary'") && message.contains("rope-half"), qPrintable(message));

        const Case c = loadPositionsCase("alibi");
        Input input = c.input;
        input.attention = {attention::parseAttentionKernelSpec("longformer", {})};
        message.clear();
        try {
            Engine engine(c.model, input);
            engine.runToEnd();
        } catch (const Error &e) {
            message = e.what();
        }
        QVERIFY2(message.contains("alibi") && message.contains("full attention"), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestPositions)
#include "tst_positions.moc"
