// Sparse Sinkhorn attention (Tay et al. 2020; src/core/model/sinkhorn.h): the ops on literal examples, the engine
// against a PyTorch forward that builds the sorted blocks explicitly (tests/tools/make_sinkhorn_reference.py),
// gradients included, the training noise against finite differences, and the refusals.

#include "engine/engine.h"
#include "errortesting.h"
#include "io/npy.h"
#include "ops/sinkhorn.h"
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

const QString kSinkhornRef = QStringLiteral(ATLAS_TEST_DATA "/sinkhorn/tiny_ref/");

Tensor sinkhornReference(const QString &name)
{
    return readNpy((kSinkhornRef + name + ".npy").toStdString());
}

float maxAbs(const Tensor &t)
{
    return Eigen::Map<const Eigen::ArrayXf>(t.data(), t.numel()).abs().maxCoeff();
}

float lossOf(const std::shared_ptr<Model> &model, const Input &input, const std::vector<int> &targets)
{
    Engine engine(model, input);
    engine.runToEnd();
    return backward(*model, input, engine.trace(), targets).loss;
}

} // namespace

class TestSinkhorn : public QObject
{
    Q_OBJECT

private slots:
    void blockSums()
    {
        Tensor p({2, 1}), dx({3, 1});
        ops::block_sum_forward(p, literal({3, 1}, {1, 2, 4}), 2);
        QCOMPARE(std::vector<float>(p.data(), p.data() + 2), (std::vector<float> {3, 4}));
        ops::block_sum_backward(dx, literal({2, 1}, {5, 7}), 2);
        QCOMPARE(std::vector<float>(dx.data(), dx.data() + 3), (std::vector<float> {5, 5, 7}));
    }

    // Equal scores give the uniform matrix; any scores give columns that sum to 1 and rows close to 1, nearer a
    // permutation the lower the temperature.
    void sinkhornNormalises()
    {
        Tensor S({2, 2});
        ops::sinkhorn_forward(S, Tensor({2, 2}), nullptr, 3, 1.0f);
        for (int64_t i = 0; i < 4; ++i)
            QVERIFY(std::fabs(S.data()[i] - 0.5f) < 1e-6f);
        const Tensor R = literal({3, 3}, {3, 0, 1, 0, 3, 1, 1, 1, 0});
        Tensor soft({3, 3}), sharp({3, 3});
        ops::sinkhorn_forward(soft, R, nullptr, 20, 1.0f);
        ops::sinkhorn_forward(sharp, R, nullptr, 100, 0.05f);
        for (int64_t j = 0; j < 3; ++j) {
            QVERIFY(std::fabs(soft.matrix().col(j).sum() - 1.0f) < 1e-5f);
            QVERIFY(std::fabs(soft.matrix().row(j).sum() - 1.0f) < 1e-3f);
        }
        // The best assignment of R (0→0, 1→1, 2→2 scores 6, any other 5 or less) is what a low temperature picks.
        for (int64_t i = 0; i < 3; ++i)
            QVERIFY(sharp.matrix()(i, i) > 0.99f);
        QVERIFY(soft.matrix().maxCoeff() < 0.9f);
    }

    // S = I sorts every block to itself: a query's two halves are its own block twice, so its context is softmax
    // over its own block. Past the end of a short last block the sorted half mixes in a zero key.
    void identitySortIsLocalAttention()
    {
        const Tensor scores = literal({1, 4, 4}, {1, 2, 9, 9, 0, 1, 9, 9, 9, 9, 3, 1, 9, 9, 0, 2});
        Tensor S({2, 2});
        S.matrix().setIdentity();
        Tensor blockProbs({1, 4, 4}), probs({1, 4, 4});
        ops::sinkhorn_attention_forward(blockProbs, probs, scores, S, 2);
        const float e = std::exp(1.0f);
        QVERIFY(std::fabs(probs.slice(0)(0, 0) - 1 / (1 + e)) < 1e-6f);
        QVERIFY(std::fabs(probs.slice(0)(0, 1) - e / (1 + e)) < 1e-6f);
        QCOMPARE(probs.slice(0)(0, 2), 0.0f);
        QVERIFY(std::fabs(blockProbs.slice(0)(0, 0) - blockProbs.slice(0)(0, 2)) < 1e-7f);
        Tensor shortBlock({1, 3, 4}), shortProbs({1, 3, 3});
        const Tensor three = literal({1, 3, 3}, {0, 0, 0, 0, 0, 0, 5, 5, 1});
        ops::sinkhorn_attention_forward(shortBlock, shortProbs, three, S, 2);
        // query 2 (block 1): sorted slots (score 1, and 0 for the missing key), local slots (1, masked)
        const float sum = 2 * e + 1;
        QVERIFY(std::fabs(shortBlock.slice(0)(2, 1) - 1 / sum) < 1e-6f);
        QCOMPARE(shortBlock.slice(0)(2, 3), 0.0f);
        QVERIFY(std::fabs(shortProbs.slice(0)(2, 2) - 2 * e / sum) < 1e-6f);
    }

    void forwardMatchesPyTorch()
    {
        const testing::ReferenceCase c = testing::loadReferenceCase("sinkhorn", "tiny");
        QCOMPARE(c.model->config.sinkhorn.block, 4);
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const Trace &tr = engine.trace();
        QString diff = testing::compareToReference("logits", tr.tensor("logits"), sinkhornReference("logits"), 1e-5);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        for (int l = 0; l < c.model->config.layers; ++l) {
            const std::string p = "layer." + std::to_string(l) + ".";
            const QString n = QString::number(l);
            for (const auto &[name, file] : std::vector<std::pair<std::string, QString>> {{"attn.sort", "sort." + n},
                     {"attn.block_probs", "block_probs." + n}, {"attn.probs", "probs." + n}, {"out", "out." + n}}) {
                diff = testing::compareToReference(
                    QString::fromStdString(p + name), tr.tensor(p + name), sinkhornReference(file), 1e-5);
                QVERIFY2(diff.isEmpty(), qPrintable(diff));
            }
        }
        QVERIFY(!tr.contains("layer.0.attn.sort_noise"));
    }

    void gradientsMatchAutograd()
    {
        const testing::ReferenceCase c = testing::loadReferenceCase("sinkhorn", "tiny");
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const Gradients g = backward(*c.model, c.input, engine.trace(), c.targets);
        QVERIFY(std::fabs(g.loss - sinkhornReference("loss").data()[0]) < 1e-5f);
        const QString why = testing::checkReferenceGradients(gradientsAsStored(*c.model, g), kSinkhornRef,
            [&](const QString &name, const Tensor &got, const Tensor &want) -> QString {
                // Adding a constant to a column of R changes nothing once the columns are normalised: b_proj's
                // gradient is close to 0 (only the last row normalisation's imperfection gives it any), so it is
                // held to the precision of the layer's other gradients instead of its own size.
                if (!name.endsWith("sort.c_proj.bias"))
                    return testing::compareToReference(name, got, want, 1e-4);
                const float scale = maxAbs(g.grads.at(name.chopped(4).toStdString() + "weight"));
                Tensor diff(got.shape());
                for (int64_t k = 0; k < got.numel(); ++k)
                    diff.data()[k] = got.data()[k] - want.data()[k];
                if (!(maxAbs(want) < 1e-3f * scale) || !(maxAbs(diff) < 1e-6f * scale))
                    return QString("%1: sinkhornReference %2, difference %3, against the weight's %4")
                        .arg(name)
                        .arg(maxAbs(want))
                        .arg(maxAbs(diff))
                        .arg(scale);
                return {};
            });
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    // In training, Gumbel noise joins the scores before the normalisation: S is Sinkhorn of R + G, and the sorting
    // network's gradient through it agrees with central differences of the loss.
    void trainingNoise()
    {
        testing::ReferenceCase c = testing::loadReferenceCase("sinkhorn", "tiny");
        c.input.sortingNoiseSeed = 12345;
        Engine engine(c.model, c.input);
        engine.runToEnd();
        const Trace &tr = engine.trace();
        const Tensor &R = tr.tensor("layer.0.attn.sort_logits"), &G = tr.tensor("layer.0.attn.sort_noise");
        Tensor noisy(R.shape()), want(R.shape());
        noisy.matrix() = R.matrix() + G.matrix();
        ops::sinkhorn_forward(want, noisy, nullptr, 7, 0.75f);
        const QString diff = testing::compareToReference("noisy S", tr.tensor("layer.0.attn.sort"), want, 1e-6);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        const Gradients g = backward(*c.model, c.input, tr, c.targets);
        for (const std::string name : {"h.0.attn.sort.c_proj.bias", "h.1.attn.sort.c_fc.bias"}) {
            const Tensor &analytic = g.grads.at(name);
            for (int64_t k = 0; k < 3; ++k) {
                const auto lossWith = [&](float delta) {
                    const auto m = std::make_shared<Model>(*c.model);
                    m->parameters().at(name)->data()[k] += delta;
                    return lossOf(m, c.input, c.targets);
                };
                const float h = 1e-2f, numeric = (lossWith(h) - lossWith(-h)) / (2 * h);
                QVERIFY2(std::fabs(numeric - analytic.data()[k]) <= 2e-3f + 0.05f * std::fabs(numeric),
                    qPrintable(QString::fromStdString(name) + ": " + QString::number(analytic.data()[k]) + " vs "
                        + QString::number(numeric)));
            }
        }
    }

    void refusals()
    {
        const testing::ReferenceCase c = testing::loadReferenceCase("sinkhorn", "tiny");
        ModelConfig config = c.model->config;
        config.causal = true;
        QVERIFY(errorFrom([&] { config.validate("cfg"); }).contains("atlas_causal must be false"));
        config = c.model->config;
        config.sinkhorn.block = 16;
        QVERIFY(errorFrom([&] { config.validate("cfg"); }).contains("must be shorter than n_positions (16)"));
        QVERIFY(errorFrom([] {
            ModelConfig::fromJson(R"({"atlas_causal": false, "atlas_sinkhorn_block": 0})", "c.json");
        }).contains("c.json: key 'atlas_sinkhorn_block' is out of range: 0 (allowed: 1 to 4096)"));
        QVERIFY(errorFrom([] {
            ModelConfig::fromJson(
                R"({"atlas_causal": false, "atlas_sinkhorn_block": 4, "atlas_sinkhorn_temperature": 0})", "c.json");
        }).contains("atlas_sinkhorn_temperature"));
        Input input = c.input;
        input.padding = {10};
        QVERIFY(errorFrom([&] { Engine(c.model, input).runToEnd(); }).contains("a Sinkhorn model"));
        QVERIFY(errorFrom([&] { StrategyRunner(*c.model, c.input, {}); }).contains("Sinkhorn"));
    }

    // The config round-trips through config.json, and `train --sinkhorn` trains one.
    void configAndTraining()
    {
        const testing::ReferenceCase c = testing::loadReferenceCase("sinkhorn", "tiny");
        const ModelConfig back = ModelConfig::fromJson(c.model->config.toJson(), "round trip");
        QCOMPARE(back.sinkhorn.block, 4);
        QCOMPARE(back.sinkhorn.iterations, 7);
        QCOMPARE(back.sinkhorn.temperature, 0.75f);
        TrainingRun run;
        run.task = "mlm";
        run.sinkhornBlock = 8;
        run.layers = 2;
        run.dModel = 32;
        run.options.steps = 2;
        run.options.batch = 2;
        const std::unique_ptr<Trainer> trainer = newTrainer(run);
        QVERIFY(trainer->model()->parameters().count("h.1.attn.sort.c_proj.weight"));
        const StepReport r = trainer->step();
        QVERIFY(std::isfinite(r.loss) && r.loss > 0);
    }
};

QTEST_GUILESS_MAIN(TestSinkhorn)
#include "tst_sinkhorn.moc"
