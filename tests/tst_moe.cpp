// Switch Transformer layers (Fedus et al. 2021; docs/models.md, "Mixture of experts") against an independent
// PyTorch reference (tests/tools/make_moe_reference.py wrote tests/data/moe): top-1 routing in every layer and
// top-2 routing in one layer of two, both with tokens dropped at capacity. Every traced tensor, the loss, the
// router loss and every gradient; then the router's invariants on random probabilities, the auxiliary loss and
// z-loss by hand, the capacity's rounding, the memory strategies, generation and the config's checks.
#include "engine/engine.h"
#include "engine/generator.h"
#include "io/npy.h"
#include "model/model.h"
#include "ops/ops.h"
#include "referencetesting.h"
#include "testbundle.h"
#include "trace/names.h"
#include "train/backprop.h"
#include "train/strategyrunner.h"
#include "util/error.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <memory>
#include <numeric>
#include <random>

using namespace atlas;
using namespace atlas::testing;
using testing::intList;

namespace {

QString moeDataPath(const QString &relative)
{
    return QStringLiteral(ATLAS_TEST_DATA "/moe/") + relative;
}

using Case = testing::ReferenceCase;

Case loadMoeCase(const QString &name)
{
    return testing::loadReferenceCase("moe", name);
}

void addMoeCases()
{
    QTest::addColumn<QString>("name");
    for (const char *name : {"switch", "top2"})
        QTest::newRow(name) << QString(name);
}

float scalarOf(const QString &file)
{
    return readNpy(moeDataPath(file).toStdString()).data()[0];
}

// The same probabilities for many (T, E) shapes: rows of a softmax over random logits.
Tensor randomProbs(std::mt19937 &rng, int64_t T, int64_t E)
{
    std::normal_distribution<float> normal(0.0f, 2.0f);
    Tensor logits({T, E}), probs({T, E});
    for (float &v : logits.values())
        v = normal(rng);
    ops::softmax_forward(probs, logits);
    return probs;
}

// Token t's experts by falling probability, the lower index first on a tie.
std::vector<int64_t> rankedExperts(const Tensor &probs, int64_t t)
{
    std::vector<int64_t> order(static_cast<size_t>(probs.dim(1)));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(
        order.begin(), order.end(), [&](int64_t a, int64_t b) { return probs.matrix()(t, a) > probs.matrix()(t, b); });
    return order;
}

} // namespace

class TestMoe : public QObject
{
    Q_OBJECT

private slots:
    void forwardMatchesPyTorch_data() { addMoeCases(); }
    void forwardMatchesPyTorch()
    {
        QFETCH(QString, name);
        const Case c = loadMoeCase(name);
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const QDir dir(moeDataPath(name + "_ref"));
        int compared = 0;
        for (const QString &file : dir.entryList({"*.npy"}, QDir::Files, QDir::Name)) {
            const std::string tensor = file.chopped(4).toStdString();
            if (tensor.starts_with("grad.") || tensor == "loss" || tensor == "router_loss")
                continue;
            const Tensor want = readNpy(dir.filePath(file).toStdString());
            const TraceEntry *got = engine.trace().find(tensor);
            QVERIFY2(got, (tensor + " is not in the trace").c_str());
            // Which expert took which token is exact: a difference there is a routing difference.
            const bool exact = tensor.ends_with("choice") || tensor.ends_with("expert") || tensor.ends_with("capacity");
            const QString why
                = testing::compareToReference(QString::fromStdString(tensor), got->tensor, want, exact ? 0.0 : kRelTol);
            QVERIFY2(why.isEmpty(), qPrintable(why));
            ++compared;
        }
        QVERIFY(compared >= 12);
    }

    void gradientsMatchPyTorch_data() { addMoeCases(); }
    void gradientsMatchPyTorch()
    {
        QFETCH(QString, name);
        const Case c = loadMoeCase(name);
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const Gradients g = backward(*c.model, c.input, engine.trace(), c.targets);
        const float loss = scalarOf(name + "_ref/loss.npy"), routerLoss = scalarOf(name + "_ref/router_loss.npy");
        QVERIFY2(std::fabs(g.loss - loss) <= 1e-4 * std::fabs(loss), qPrintable(QString::number(g.loss)));
        QVERIFY2(std::fabs(g.routerLoss - routerLoss) <= 1e-4 * std::fabs(routerLoss),
            qPrintable(QString("router loss %1, PyTorch %2").arg(g.routerLoss).arg(routerLoss)));
        QCOMPARE(g.grads.size(), c.model->parameters().size()); // the router and every expert too
        const QString why = testing::checkReferenceGradients(gradientsAsStored(*c.model, g), moeDataPath(name + "_ref"),
            [](const QString &parameter, const Tensor &got, const Tensor &want) {
                return testing::compareToReference(parameter, got, want, kRelTol);
            });
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    // Each expert takes at most `capacity` choices; a choice is dropped only when its expert is full of choices
    // that came before it (a lower rank, or the same rank earlier in the sequence); kept choices are the token's
    // top-k by probability, in order, gated by their probability.
    void routingKeepsCapacityAndDropsTheOverflowInOrder()
    {
        std::mt19937 rng(7);
        for (int trial = 0; trial < 300; ++trial) {
            const int64_t T = 1 + int64_t(rng() % 40), E = 2 + int64_t(rng() % 7),
                          K = 1 + int64_t(rng() % std::min<int64_t>(E, 3));
            const double factor = 0.25 * double(1 + rng() % 10);
            const int64_t capacity = ops::expert_capacity(factor, T, int(E));
            const Tensor probs = randomProbs(rng, T, E);
            Tensor choice({T, K}), gate({T, K});
            ops::router_route(choice, gate, probs, capacity);
            std::vector<int64_t> load(static_cast<size_t>(E), 0);
            std::vector<std::vector<std::pair<int64_t, int64_t>>> kept(static_cast<size_t>(E)); // (rank, token)
            for (int64_t t = 0; t < T; ++t) {
                const std::vector<int64_t> order = rankedExperts(probs, t);
                for (int64_t r = 0; r < K; ++r) {
                    const int e = int(choice.matrix()(t, r));
                    if (e >= 0) {
                        QCOMPARE(int64_t(e), order[size_t(r)]);
                        QCOMPARE(gate.matrix()(t, r), probs.matrix()(t, e));
                        kept[size_t(e)].push_back({r, t});
                        ++load[size_t(e)];
                    } else {
                        QCOMPARE(gate.matrix()(t, r), 0.0f);
                    }
                }
            }
            for (int64_t e = 0; e < E; ++e)
                QVERIFY(load[size_t(e)] <= capacity);
            for (int64_t t = 0; t < T; ++t)
                for (int64_t r = 0; r < K; ++r) {
                    if (choice.matrix()(t, r) >= 0)
                        continue;
                    const auto &full = kept[size_t(rankedExperts(probs, t)[size_t(r)])];
                    QCOMPARE(int64_t(full.size()), capacity); // dropped only from a full expert …
                    for (const auto &[rank, token] : full) // … full of choices queued before this one
                        QVERIFY(rank < r || (rank == r && token < t));
                }
        }
    }

    void capacityRoundsUp()
    {
        QCOMPARE(ops::expert_capacity(1.25, 16, 4), int64_t(5)); // exact: no rounding
        QCOMPARE(ops::expert_capacity(1.0, 10, 4), int64_t(3)); // 2.5 → 3
        QCOMPARE(ops::expert_capacity(1.1, 10, 2), int64_t(6)); // 5.5 → 6
        QCOMPARE(ops::expert_capacity(0.1, 4, 8), int64_t(1)); // never 0
        QCOMPARE(ops::expert_capacity(2.0, 1, 4), int64_t(1));
    }

    // E · Σ fᵢ Pᵢ for four tokens and two experts: f = (3/4, 1/4), P = (0.65, 0.35), so 2 · (0.4875 + 0.0875).
    void auxiliaryLossByHand()
    {
        Tensor probs({4, 2});
        const float values[] = {0.9f, 0.1f, 0.8f, 0.2f, 0.3f, 0.7f, 0.6f, 0.4f};
        std::copy(std::begin(values), std::end(values), probs.data());
        QVERIFY(std::fabs(ops::router_aux_loss(probs) - 1.15f) < 1e-6f);
        Tensor uniform({6, 3}, 1.0f / 3.0f); // every top-1 on expert 0 (ties): f = (1, 0, 0), P = ⅓ each
        QVERIFY(std::fabs(ops::router_aux_loss(uniform) - 1.0f) < 1e-6f);
        Tensor dprobs({4, 2});
        ops::router_aux_loss_backward(dprobs, probs, 0.5f); // 0.5 · E · fᵢ / T
        QVERIFY(std::fabs(dprobs.matrix()(2, 0) - 0.5f * 2 * 0.75f / 4) < 1e-7f);
        QVERIFY(std::fabs(dprobs.matrix()(0, 1) - 0.5f * 2 * 0.25f / 4) < 1e-7f);
        Tensor logits({2, 2});
        const float l[] = {0.0f, 0.0f, 1.0f, -1.0f}; // z = log 2, then log(e + 1/e)
        std::copy(std::begin(l), std::end(l), logits.data());
        const double z1 = std::log(2.0), z2 = std::log(std::exp(1.0) + std::exp(-1.0));
        QVERIFY(std::fabs(ops::router_z_loss(logits) - (z1 * z1 + z2 * z2) / 2) < 1e-6);
    }

    void memoryStrategiesKeepEveryBit_data() { addMoeCases(); }
    void memoryStrategiesKeepEveryBit()
    {
        QFETCH(QString, name);
        const Case c = loadMoeCase(name);
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
        QCOMPARE(checkpoint.routerLoss, plain.routerLoss);
        for (const auto &[parameter, grad] : plain.grads)
            QVERIFY2(std::equal(grad.data(), grad.data() + grad.numel(), checkpoint.grads.at(parameter).data()),
                parameter.c_str());
    }

    // Reversible blocks rebuild each block's input from its output, routing G(Y₁) again: the gradients must match
    // the ones computed from stored activations (to float32 rounding, as tst_memorystrategies holds dense models).
    void reversibleBlocksRouteTheSameWhenRebuilt()
    {
        ModelConfig c;
        c.layers = 3;
        c.heads = 2;
        c.dModel = 16;
        c.dFF = 32;
        c.vocab = 30;
        c.context = 16;
        c.reversible = true;
        c.experts = 3;
        c.capacityFactor = 0.75f; // tokens dropped in every layer
        const Model model = Model::random(c, 5);
        const Input input {{3, 17, 22, 8, 0, 25, 29, 11, 5, 14, 3, 9}, {}};
        const std::vector<int> targets = {17, 22, 8, 0, 25, 29, 11, 5, 14, 3, 9, -1};
        const auto run = [&](MemoryStrategy strategy) {
            MemoryOptions options;
            options.strategy = strategy;
            StrategyRunner runner(model, input, options);
            runner.forward();
            Gradients g;
            runner.backward(targets, g);
            return g;
        };
        const Gradients plain = run(MemoryStrategy::Plain), reversible = run(MemoryStrategy::Reversible);
        QVERIFY(std::fabs(reversible.loss - plain.loss) < 1e-6f);
        QVERIFY(std::fabs(reversible.routerLoss - plain.routerLoss) < 1e-6f);
        QVERIFY(plain.routerLoss > 0);
        for (const auto &[parameter, grad] : plain.grads) {
            const QString why = testing::compareToReference(
                QString::fromStdString(parameter), reversible.grads.at(parameter), grad, 1e-4);
            QVERIFY2(why.isEmpty(), qPrintable(why));
        }
    }

    // Generation routes each new token alone, so no capacity binds: with room for every token, the KV-cached
    // generator must give the full forward pass's logits position by position.
    void generationMatchesTheForwardPassWhenNothingIsDropped_data() { addMoeCases(); }
    void generationMatchesTheForwardPassWhenNothingIsDropped()
    {
        QFETCH(QString, name);
        Case c = loadMoeCase(name);
        c.model->config.capacityFactor = float(c.model->config.experts); // capacity T: nothing dropped
        Engine engine(c.model, c.input);
        engine.runToEnd();
        for (int l = 0; l < c.model->config.layers; ++l)
            if (const TraceEntry *e = engine.trace().find(names::layerTensor(l, "router.choice")))
                for (float v : e->tensor.values())
                    QVERIFY(v >= 0);
        const Tensor &logits = engine.trace().tensor("logits");
        const int64_t V = logits.dim(1);
        for (size_t n = 1; n <= c.input.tokens.size(); ++n) {
            const Generator generator(c.model, std::vector<int>(c.input.tokens.begin(), c.input.tokens.begin() + n));
            const Tensor &got = generator.lastLogits();
            for (int64_t v = 0; v < V; ++v)
                QVERIFY2(std::fabs(got.data()[v] - logits.matrix()(int64_t(n) - 1, v)) < 1e-4f,
                    qPrintable(QString("position %1, token %2").arg(n - 1).arg(v)));
        }
    }

    void savedModelLoadsBackTheSame()
    {
        const Case c = loadMoeCase("top2");
        QTemporaryDir dir;
        c.model->save(dir.path().toStdString());
        const Model back = Model::load(dir.path().toStdString());
        QCOMPARE(back.config.experts, 3);
        QCOMPARE(back.config.expertTopK, 2);
        QCOMPARE(back.config.capacityFactor, 1.5f);
        QCOMPARE(back.config.moeLayers, std::vector<int> {1});
        QVERIFY(!back.config.isMoeLayer(0) && back.config.isMoeLayer(1));
        QCOMPARE(back.parameters().size(), c.model->parameters().size());
        for (const auto &[name, p] : c.model->parameters())
            QVERIFY2(std::equal(p->data(), p->data() + p->numel(), back.parameters().at(name)->data()), name.c_str());
    }

    void badConfigsAreNamed_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("one expert") << R"({"atlas_experts": 1})"
                                    << "atlas_experts must be 0";
        QTest::newRow("top-k above E") << R"({"atlas_experts": 2, "atlas_expert_top_k": 3})"
                                       << "atlas_expert_top_k must be in 1..atlas_experts (2)";
        QTest::newRow("no such layer") << R"({"atlas_experts": 2, "atlas_moe_layers": [0, 5]})"
                                       << "atlas_moe_layers names layer 5";
        QTest::newRow("not a list") << R"({"atlas_experts": 2, "atlas_moe_layers": 1})"
                                    << "'atlas_moe_layers' must be a list";
        QTest::newRow("zero factor") << R"({"atlas_experts": 2, "atlas_capacity_factor": 0})"
                                     << "atlas_capacity_factor";
    }
    void badConfigsAreNamed()
    {
        QFETCH(QString, json);
        QFETCH(QString, expected);
        try {
            ModelConfig::fromJson(json.toStdString(), "config.json");
            QFAIL("accepted");
        } catch (const Error &e) {
            QVERIFY2(QString(e.what()).contains(expected) && QString(e.what()).startsWith("config.json"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestMoe)
#include "tst_moe.moc"
