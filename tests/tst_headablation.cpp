// Head ablation (Michel et al. 2019): the engine's merge with heads switched off against an independent PyTorch
// reference (tests/tools/make_reference.py, gpt2_tiny_ablated_ref), the head list parser and validation, and the
// importance table on the built-in reverse model as docs/models.md states it.

#include "analysis/headimportance.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "io/npy.h"
#include "model/builtinmodels.h"
#include "sanitizertesting.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "train/backprop.h"
#include "train/task.h"
#include "util/error.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <cmath>

using namespace atlas;
using namespace atlas::testing;

namespace {

std::string dataFile(const std::string &relative)
{
    return std::string(ATLAS_TEST_DATA "/") + relative;
}

std::vector<int> ablationTokens()
{
    QFile f(QString::fromStdString(dataFile("gpt2_tiny_ref/tokens.json")));
    f.open(QIODevice::ReadOnly);
    std::vector<int> out;
    for (const QJsonValue &v : QJsonDocument::fromJson(f.readAll()).array())
        out.push_back(v.toInt());
    return out;
}

using atlas::testing::errorFrom;

} // namespace

class TestHeadAblation : public QObject
{
    Q_OBJECT

private slots:
    void matchesThePyTorchReference_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::newRow("zero") << "zero";
        QTest::newRow("mean over the input's positions") << "mean";
    }

    void matchesThePyTorchReference()
    {
        QFETCH(QString, mode);
        const auto model = std::make_shared<const Model>(Model::load(dataFile("gpt2_tiny")));
        const std::vector<int> tokens = ablationTokens();
        const std::vector<HeadRef> heads = {{0, 1}, {1, 3}};
        // gpt2_tiny names no task, so a mean ablation averages over the input itself, as the reference does.
        const HeadAblation ablation = makeHeadAblation(
            model, heads, parseAblationMode(mode.toStdString(), "test"), ablationReferences(*model, tokens));
        Engine engine(model, {tokens, {}, {}, ablation});
        engine.runToEnd();
        const std::string dir = dataFile("gpt2_tiny_ablated_ref/" + mode.toStdString() + "/");
        for (const char *name : {"layer.0.attn.merged", "layer.1.attn.merged", "logits", "next_probs"}) {
            const float diff = maxDifference(engine.trace().tensor(name), readNpy(dir + name + ".npy"));
            QVERIFY2(diff < 2e-5f, qPrintable(QString("%1 differs by %2").arg(name).arg(diff)));
        }
        // The whole model gives other logits: the reference would catch an ablation that did nothing.
        Engine whole(model, {tokens, {}});
        whole.runToEnd();
        QVERIFY(maxDifference(whole.trace().tensor("logits"), readNpy(dir + "logits.npy")) > 1e-2f);
        // What the heads computed stays in the trace as computed; the merge says what it replaced.
        QCOMPARE(
            maxDifference(engine.trace().tensor("layer.0.attn.context"), whole.trace().tensor("layer.0.attn.context")),
            0.0f);
        const std::string formula = engine.trace().find("layer.1.attn.merged")->formula;
        QVERIFY2(formula.find("head 3") != std::string::npos, formula.c_str());
        QVERIFY2(whole.trace().find("layer.1.attn.merged")->formula.find("head") == std::string::npos,
            whole.trace().find("layer.1.attn.merged")->formula.c_str());
    }

    void headListsAreParsedAndChecked()
    {
        const auto heads = parseHeadList(" 0.1, 1.3", 2, 4, "--ablate-heads");
        QCOMPARE(heads.size(), size_t(2));
        QCOMPARE(heads[1], (HeadRef {1, 3}));
        QCOMPARE(headListText(heads), std::string("0.1,1.3"));
        QVERIFY(parseHeadList("", 2, 4, "x").empty());
        QVERIFY(errorFrom([] { parseHeadList("2.0", 2, 4, "--ablate-heads"); }).contains("not in the model"));
        QVERIFY(errorFrom([] { parseHeadList("0.4", 2, 4, "--ablate-heads"); }).contains("not in the model"));
        QVERIFY(errorFrom([] { parseHeadList("0.1,0.1", 2, 4, "--ablate-heads"); }).contains("twice"));
        QVERIFY(errorFrom([] { parseHeadList("1", 2, 4, "--ablate-heads"); }).contains("not layer.head"));
        QVERIFY(errorFrom([] { parseHeadList("-1.2", 2, 4, "--ablate-heads"); }).contains("not layer.head"));
        QVERIFY(errorFrom([] { parseAblationMode("half", "--ablation"); }).contains("zero or mean"));
    }

    void theEngineRefusesAnAblationThatDoesNotFit()
    {
        const auto model = loadModel("reverse");
        const std::vector<int> tokens = {97, 98, 62};
        HeadAblation outside;
        outside.heads = {{2, 0, {}}};
        QVERIFY(errorFrom([&] { Engine(model, {tokens, {}, {}, outside}); }).contains("head 2.0 is not in the model"));
        HeadAblation shortMean;
        shortMean.mode = HeadAblation::Mode::Mean;
        shortMean.heads = {{0, 0, {1.0f, 2.0f}}};
        QVERIFY(errorFrom([&] { Engine(model, {tokens, {}, {}, shortMean}); }).contains("head dimension"));
        // Gradients of an ablated run are not implemented, and say so rather than differentiate the whole model.
        HeadAblation zero;
        zero.heads = {{0, 0, {}}};
        Engine engine(model, {tokens, {}, {}, zero});
        engine.runToEnd();
        QVERIFY(errorFrom([&] {
            backward(*model, engine.input(), engine.trace(), {98, 62, -1});
        }).contains("heads switched off"));
    }

    // docs/models.md: on reverse every head of layer 0 carries part of the copying (each alone costs at least half a
    // nat of held-out loss), while no head of layer 1 costs a tenth of one.
    void reverseNeedsEveryHeadOfLayerZeroAndNoneOfLayerOne()
    {
        const HeadImportance r = headImportance(loadModel("reverse"), HeadAblation::Mode::Zero, 128);
        QCOMPARE(r.without.size(), size_t(2));
        QVERIFY(r.baseline.tokenAccuracy > 0.999f);
        for (int h = 0; h < 4; ++h) {
            QVERIFY2(r.lossIncrease(0, h) > 0.5, qPrintable(QString::number(r.lossIncrease(0, h))));
            QVERIFY2(std::abs(r.lossIncrease(1, h)) < 0.1, qPrintable(QString::number(r.lossIncrease(1, h))));
        }
        // Mean ablation scores every head against the same intact model (on few examples: its code runs under the
        // sanitizers too, where theLessonsClaimsHold skips).
        const HeadImportance mean = headImportance(loadModel("reverse"), HeadAblation::Mode::Mean, 16);
        QCOMPARE(mean.without.size(), size_t(2));
        QCOMPARE(mean.without[1].size(), size_t(4));
        QCOMPARE(mean.examples, 16);
        QVERIFY(mean.baseline.tokenAccuracy > 0.999f);
        QVERIFY(mean.lossIncrease(0, 0) > 0.0);
        int calls = 0;
        const HeadImportance cancelled
            = headImportance(loadModel("reverse"), HeadAblation::Mode::Zero, 16, [&](int, int) { return ++calls < 3; });
        QVERIFY(cancelled.without.empty());
    }

    // lessons/02-what-heads-do.md: layer 1's heads stand in for each other (each alone costs almost nothing, all four
    // together more than half of the exact matches); austen's most important head is 0.2, and its previous-letter
    // and word-start heads (1.1, 1.2) cost about a tenth of a nat or less, zeroed or mean-ablated.
    void theLessonsClaimsHold()
    {
        ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY();
        const auto reverse = loadModel("reverse");
        const auto task = Task::create("reverse");
        const Evaluation layerOne = evaluateOnTask(reverse, *task, 256, 12345, 1,
            makeHeadAblation(reverse, {{1, 0}, {1, 1}, {1, 2}, {1, 3}}, HeadAblation::Mode::Zero, {}));
        QVERIFY2(layerOne.exactMatch < 0.5f, qPrintable(QString::number(layerOne.exactMatch)));
        const Evaluation twoMirrors = evaluateOnTask(
            reverse, *task, 256, 12345, 1, makeHeadAblation(reverse, {{0, 1}, {0, 2}}, HeadAblation::Mode::Zero, {}));
        QVERIFY2(twoMirrors.exactMatch < 0.1f, qPrintable(QString::number(twoMirrors.exactMatch)));
        for (const auto mode : {HeadAblation::Mode::Zero, HeadAblation::Mode::Mean}) {
            const HeadImportance austen = headImportance(loadModel("austen"), mode, 128);
            QVERIFY2(austen.lossIncrease(0, 2) > 0.8, qPrintable(QString::number(austen.lossIncrease(0, 2))));
            for (int l = 0; l < 4; ++l)
                for (int h = 0; h < 4; ++h)
                    QVERIFY((l == 0 && h == 2) || austen.lossIncrease(l, h) < austen.lossIncrease(0, 2));
            QVERIFY2(austen.lossIncrease(1, 1) < 0.11, qPrintable(QString::number(austen.lossIncrease(1, 1))));
            QVERIFY2(austen.lossIncrease(1, 2) < 0.11, qPrintable(QString::number(austen.lossIncrease(1, 2))));
        }
    }

    void compareAblationScoresTheTaskAndMovesTheDistribution()
    {
        const auto model = loadModel("reverse");
        const std::vector<int> tokens = {'a', 'b', 'c', 'd', 'e', '>', 'e', 'd'};
        const HeadAblation zero
            = makeHeadAblation(model, {{0, 0}, {0, 1}, {0, 2}, {0, 3}}, HeadAblation::Mode::Zero, {});
        const AblationComparison c = compareAblation(model, {tokens, {}}, 7, zero, 64);
        QVERIFY(c.scored);
        QVERIFY(c.before['c'] > 0.9f); // the whole model writes the next mirrored letter
        QVERIFY(c.after['c'] < c.before['c']);
        QVERIFY(c.ablated.tokenAccuracy < c.baseline.tokenAccuracy - 0.3f);
        QVERIFY(errorFrom([&] { compareAblation(model, {tokens, {}}, 8, zero); }).contains("outside the input"));
        // A model without a task is compared on the distribution only, and mean ablation averages this input.
        const auto tiny = loadModel("tiny-bytes");
        QCOMPARE(ablationReferences(*tiny, tokens).size(), size_t(1));
        QVERIFY(!compareAblation(tiny, {tokens, {}}, 3, zero).scored);
        QVERIFY(errorFrom([&] { headImportance(tiny, HeadAblation::Mode::Zero); }).contains("names no task"));
    }
};

QTEST_GUILESS_MAIN(TestHeadAblation)
#include "tst_headablation.moc"
