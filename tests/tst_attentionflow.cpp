// Attention rollout and attention flow (analysis/attentionflow.h) against references written from Abnar & Zuidema
// 2020 with networkx's max-flow (tests/tools/make_flow_reference.py), on the engine's own attention of a causal and
// a bidirectional checkpoint; and the properties that hold for any input: rollout rows sum to 1 and follow the mask,
// a single layer's rollout is (A + I) / 2, flow never exceeds the capacity into the output.
#include "analysis/attentionflow.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "io/npy.h"
#include "model/builtinmodels.h"
#include "tensortesting.h"
#include "testbundle.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <cmath>

using namespace atlas;
using namespace atlas::testing;
using atlas::testing::errorFrom;

namespace {

std::vector<int> flowTokens(const QString &model)
{
    QFile f(dataPath(model + "_ref/tokens.json"));
    std::vector<int> tokens;
    if (f.open(QIODevice::ReadOnly))
        for (const QJsonValue &v : QJsonDocument::fromJson(f.readAll()).array())
            tokens.push_back(v.toInt());
    return tokens;
}

double maxDiffFrom(const Eigen::MatrixXd &got, const float *want)
{
    double worst = 0;
    for (int i = 0; i < got.rows(); ++i)
        for (int j = 0; j < got.cols(); ++j)
            worst = std::max(worst, std::abs(got(i, j) - double(want[i * got.cols() + j])));
    return worst;
}

} // namespace

class TestAttentionFlow : public QObject
{
    Q_OBJECT

private slots:
    void matchesThePapersDefinition_data()
    {
        QTest::addColumn<QString>("model");
        QTest::newRow("causal (llama_tiny)") << "llama_tiny";
        QTest::newRow("bidirectional (bert_tiny)") << "bert_tiny";
    }

    void matchesThePapersDefinition()
    {
        QFETCH(QString, model);
        const auto m = std::make_shared<const Model>(Model::load(dataPath(model).toStdString()));
        Engine engine(m, Input {flowTokens(model), {}});
        engine.runToEnd();
        const int L = m->config.layers;
        for (const char *fusion : {"mean", "max", "min"}) {
            const auto augmented = augmentedAttention(engine.trace(), {}, L, headFusionFromName(fusion));
            QCOMPARE(int(augmented.size()), L);
            const auto rollout = attentionRollout(augmented);
            const Tensor want = readNpy(dataPath("flow/" + model + "/rollout." + fusion + ".npy").toStdString());
            const int64_t T = want.dim(1);
            for (int l = 0; l < L; ++l)
                QVERIFY2(maxDiffFrom(rollout[size_t(l)], want.data() + l * T * T) < 2e-6,
                    qPrintable(QString("%1 rollout after layer %2: %3")
                                   .arg(fusion)
                                   .arg(l)
                                   .arg(maxDiffFrom(rollout[size_t(l)], want.data() + l * T * T))));
        }
        const auto augmented = augmentedAttention(engine.trace(), {}, L, HeadFusion::Mean);
        const Tensor raw = readNpy(dataPath("flow/" + model + "/flow.raw.npy").toStdString());
        const Tensor normalised = readNpy(dataPath("flow/" + model + "/flow.normalised.npy").toStdString());
        const int64_t T = raw.dim(0);
        for (int i = 0; i < T; ++i) {
            const AttentionFlow flow = attentionFlow(augmented, i);
            for (int j = 0; j < T; ++j) {
                QVERIFY2(std::abs(flow.raw[size_t(j)] - raw.data()[i * T + j]) < 2e-6,
                    qPrintable(QString("flow %1 <- %2: %3, networkx %4")
                                   .arg(i)
                                   .arg(j)
                                   .arg(flow.raw[size_t(j)])
                                   .arg(raw.data()[i * T + j])));
                QVERIFY(std::abs(flow.normalised[size_t(j)] - normalised.data()[i * T + j]) < 2e-6);
            }
        }
    }

    // Properties of any input: a row of the rollout is a distribution over input tokens that never reaches a token
    // the mask hides (causal: none after the position); one layer's rollout is (A + I) / 2; the flow into a position
    // is at most 1, the capacity into its node, and reaches no later token in a causal model.
    void propertiesOfAnyInput()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse");
        Engine engine(m, Input {{5, 9, 12, 7, 3, 14, 8}, {}});
        engine.runToEnd();
        const auto augmented = augmentedAttention(engine.trace(), {}, m->config.layers, HeadFusion::Mean);
        const auto rollout = attentionRollout(augmented);
        const int T = 7;
        const Tensor &probs = engine.trace().tensor("layer.0.attn.probs");
        const int H = int(probs.dim(0));
        for (int i = 0; i < T; ++i) {
            QVERIFY(std::abs(rollout.back().row(i).sum() - 1.0) < 1e-12);
            for (int j = i + 1; j < T; ++j)
                QCOMPARE(rollout.back()(i, j), 0.0);
            for (int j = 0; j < T; ++j) {
                double mean = 0;
                for (int h = 0; h < H; ++h)
                    mean += probs.data()[(h * T + i) * T + j];
                QVERIFY(std::abs(rollout.front()(i, j) - (mean / H + (i == j)) / 2) < 1e-7);
            }
            const AttentionFlow flow = attentionFlow(augmented, i);
            for (int j = 0; j < T; ++j) {
                QVERIFY(flow.raw[size_t(j)] <= 1 + 1e-12);
                if (j > i)
                    QCOMPARE(flow.raw[size_t(j)], 0.0);
            }
        }
        // A partial trace gives the layers run so far.
        Engine partial(m, Input {{5, 9, 12}, {}});
        partial.runTo(partial.program().producerOf("layer.0.attn.probs") + 1);
        QCOMPARE(augmentedAttention(partial.trace(), {}, m->config.layers, HeadFusion::Mean).size(), size_t(1));
    }

    void limitsAndNamesAreChecked()
    {
        QVERIFY(QString::fromStdString(attentionFlowProblem(13, 128)).contains("200000 edges"));
        QVERIFY(QString::fromStdString(attentionFlowProblem(2, 129)).contains("128 tokens"));
        QVERIFY(attentionFlowProblem(12, 64).empty());
        QVERIFY(errorFrom([] { (void)headFusionFromName("median"); }).contains("mean, max or min"));
        std::vector<Eigen::MatrixXd> one = {Eigen::MatrixXd::Identity(3, 3)};
        QVERIFY(errorFrom([&] { (void)attentionFlow(one, 3); }).contains("position 3"));
    }
};

QTEST_GUILESS_MAIN(TestAttentionFlow)
#include "tst_attentionflow.moc"
