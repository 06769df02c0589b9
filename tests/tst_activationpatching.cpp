// Activation patching (analysis/activationpatching.h): the exact cases (the one differing position's embedding
// restores the clean metric, an equal position changes nothing, every position together is the clean run, no patch
// is the corrupted run), noise corruption, the refusals, and what patching finds in the built-in models: reverse's
// letter reaches the answer through its layer-0 heads (tst_builtin_models' mirror claim), copy's through layer 0.
#include "analysis/activationpatching.h"
#include "engine/engine.h"
#include "errortesting.h"
#include "io/npy.h"
#include "model/builtinmodels.h"
#include "referencetesting.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>
#include <numeric>

using namespace atlas;
using namespace atlas::testing;
using atlas::testing::errorFrom;

namespace {

} // namespace

class TestActivationPatching : public QObject
{
    Q_OBJECT

private slots:
    // reverse reads "abcd>" and must write "d"; the corrupted question "abce>" makes it write "e". The metric is
    // logit(d) − logit(e) at ">".
    void theExactCases()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse");
        const Input clean {encode(*m, "abcd>"), {}};
        Corruption corruption;
        corruption.tokens = encode(*m, "abce>");
        PatchingOptions options;
        options.metric = {-1, encode(*m, "d").front(), encode(*m, "e").front()};
        const PatchingResult r = activationPatching(m, clean, corruption, options);
        QCOMPARE(r.rows, m->config.layers);
        QCOMPARE(r.cols, 5);
        QCOMPARE(r.patches, r.rows * r.cols);
        std::vector<std::pair<int, int>> reported;
        options.progress = [&reported](int done, int total) {
            reported.push_back({done, total});
            return true;
        };
        (void)activationPatching(m, clean, corruption, options);
        QCOMPARE(int(reported.size()), r.patches + 1); // before each patch, and once done
        QCOMPARE(reported.back(), std::make_pair(r.patches, r.patches));
        options.progress = [](int done, int) { return done < 3; }; // the user stops it
        QVERIFY(errorFrom([&] { (void)activationPatching(m, clean, corruption, options); }).contains("cancelled"));
        options.progress = nullptr;
        QVERIFY2(r.clean > 0 && r.corrupted < 0, qPrintable(QString("%1 %2").arg(r.clean).arg(r.corrupted)));
        // The stream entering block 0 is the embedding: only position 3 differs, so patching it is the clean run
        // and patching any other position changes nothing, exactly.
        QCOMPARE(r.recoveredAt(0, 3), 1.0);
        for (int t : {0, 1, 2, 4})
            QCOMPARE(r.recoveredAt(0, t), 0.0);
        // Before block 1, position 3 no longer holds all of it: the answer position ">" has read it in block 0.
        QVERIFY(r.recoveredAt(1, 4) > 0.5);
        std::vector<PatchCell> everyPosition;
        for (int t = 0; t < 5; ++t)
            everyPosition.push_back({PatchSite::Residual, 1, t});
        QCOMPARE(patchedMetric(m, clean, corruption, options.metric, everyPosition), r.clean);
        QCOMPARE(patchedMetric(m, clean, corruption, options.metric, {}), r.corrupted);
        QCOMPARE(patchedMetric(m, clean, corruption, options.metric, {{PatchSite::Residual, 1, 4}}),
            r.metric[size_t(1 * r.cols + 4)]);
    }

    // Every head of a Llama checkpoint (grouped-query attention, biases, RoPE) against a PyTorch forward with a hook
    // on each head's context (tests/tools/make_patching_reference.py).
    void everyHeadMatchesPyTorch()
    {
        const QString dir = QStringLiteral(ATLAS_TEST_DATA "/patching/llama_tiny/");
        QFile f(dir + "input.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        const auto m
            = std::make_shared<const Model>(Model::load(QStringLiteral(ATLAS_TEST_DATA "/llama_tiny").toStdString()));
        const Input clean {atlas::testing::intList(o["clean"]), {}};
        Corruption corruption;
        corruption.tokens = atlas::testing::intList(o["corrupted"]);
        PatchingOptions options;
        options.site = PatchSite::Heads;
        options.metric = {-1, o["target"].toInt(), o["contrast"].toInt()};
        const PatchingResult r = activationPatching(m, clean, corruption, options);
        QVERIFY(std::abs(r.clean - o["clean_metric"].toDouble()) < 1e-5);
        QVERIFY(std::abs(r.corrupted - o["corrupted_metric"].toDouble()) < 1e-5);
        const Tensor want = readNpy((dir + "recovered.npy").toStdString());
        QCOMPARE(want.dim(0), int64_t(r.rows));
        QCOMPARE(want.dim(1), int64_t(r.cols));
        for (int l = 0; l < r.rows; ++l)
            for (int h = 0; h < r.cols; ++h)
                QVERIFY2(std::abs(r.recoveredAt(l, h) - want.data()[l * r.cols + h]) < 1e-5,
                    qPrintable(QString("layer %1 head %2: %3, PyTorch %4")
                                   .arg(l)
                                   .arg(h)
                                   .arg(r.recoveredAt(l, h))
                                   .arg(want.data()[l * r.cols + h])));
    }

    // Meng et al.'s corruption: noise on the embedding at chosen positions, the same for the same seed; patching
    // those positions' embedding back is the clean run.
    void noiseOnTheEmbedding()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse");
        const Input clean {encode(*m, "abcd>"), {}};
        Corruption noise;
        noise.noisePositions = {2, 3};
        noise.seed = 7;
        PatchingOptions options;
        options.metric = {-1, encode(*m, "d").front(), -1}; // p(d)
        const PatchingResult a = activationPatching(m, clean, noise, options);
        const PatchingResult b = activationPatching(m, clean, noise, options);
        QCOMPARE(a.corrupted, b.corrupted);
        QVERIFY(a.corrupted < a.clean);
        QCOMPARE(a.corruptedTokens, clean.tokens);
        QCOMPARE(
            patchedMetric(m, clean, noise, options.metric, {{PatchSite::Residual, 0, 2}, {PatchSite::Residual, 0, 3}}),
            a.clean);
    }

    // What patching finds in the built-in models, as their claims say: in reverse the letter to write reaches the
    // answer through the layer-0 heads (every one of them attends to the mirrored letter), not the layer-1 ones;
    // the feed-forward layers carry little of it on their own.
    void reversesHeadsAreTheLayerZeroOnes()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse");
        const Input clean {encode(*m, "abcdefgh>"), {}};
        Corruption corruption;
        corruption.tokens = encode(*m, "abcdefgz>");
        PatchingOptions options;
        options.site = PatchSite::Heads;
        options.metric = {-1, encode(*m, "h").front(), encode(*m, "z").front()};
        const PatchingResult heads = activationPatching(m, clean, corruption, options);
        QCOMPARE(heads.cols, m->config.heads);
        double layer0 = 0, layer1 = 0;
        for (int h = 0; h < heads.cols; ++h) {
            layer0 = std::max(layer0, heads.recoveredAt(0, h));
            layer1 = std::max(layer1, std::abs(heads.recoveredAt(1, h)));
        }
        QVERIFY2(layer0 > 0.3, qPrintable(QString::number(layer0)));
        QVERIFY2(layer1 < layer0 / 2, qPrintable(QString("%1 %2").arg(layer1).arg(layer0)));
        // Lesson 17: no layer-0 head does it alone, and the four together restore more than the sum of their parts.
        double sum = 0;
        std::vector<PatchCell> layerZero;
        for (int h = 0; h < heads.cols; ++h) {
            sum += heads.recoveredAt(0, h);
            layerZero.push_back({PatchSite::Heads, 0, h});
        }
        const double together = (patchedMetric(m, clean, corruption, options.metric, layerZero) - heads.corrupted)
            / (heads.clean - heads.corrupted);
        QVERIFY2(together > 0.99 && sum < 0.8 && layer0 < 0.6, qPrintable(QString("%1 %2").arg(together).arg(sum)));
    }

    void copysHeadsAreTheLayerZeroOnes()
    {
        const std::shared_ptr<const Model> m = loadModel("copy");
        const Input clean {encode(*m, "qzkxwmbt|qzkx"), {}};
        Corruption corruption;
        corruption.tokens = encode(*m, "qzkxambt|qzkx"); // the letter after the first "x" changed
        PatchingOptions options;
        options.site = PatchSite::Heads;
        options.metric = {-1, encode(*m, "w").front(), encode(*m, "a").front()};
        const PatchingResult heads = activationPatching(m, clean, corruption, options);
        // Lesson 2's induction head, layer 0 head 3, carries all of it.
        QVERIFY2(heads.recoveredAt(0, 3) > 0.99, qPrintable(QString::number(heads.recoveredAt(0, 3))));
        double layer0 = 0, layer1 = 0;
        for (int h = 0; h < heads.cols; ++h) {
            layer0 = std::max(layer0, heads.recoveredAt(0, h));
            layer1 = std::max(layer1, std::abs(heads.recoveredAt(1, h)));
        }
        QVERIFY2(layer0 > 0.3, qPrintable(QString::number(layer0)));
        QVERIFY2(layer1 < layer0 / 2, qPrintable(QString("%1 %2").arg(layer1).arg(layer0)));
        options.site = PatchSite::Mlp;
        const PatchingResult mlp = activationPatching(m, clean, corruption, options);
        QCOMPARE(mlp.cols, 1);
    }

    void refusals()
    {
        const std::shared_ptr<const Model> m = loadModel("reverse");
        const Input clean {encode(*m, "abcd>"), {}};
        PatchingOptions options;
        options.metric = {-1, 5, 6};
        Corruption shorter;
        shorter.tokens = encode(*m, "abc>");
        QVERIFY(errorFrom([&] { (void)activationPatching(m, clean, shorter, options); }).contains("equal length"));
        QVERIFY(errorFrom([&] {
            (void)activationPatching(m, clean, Corruption {}, options);
        }).contains("a corrupted input"));
        Corruption same;
        same.tokens = clean.tokens;
        QVERIFY(errorFrom([&] { (void)activationPatching(m, clean, same, options); }).contains("same metric"));
        Corruption noise;
        noise.noisePositions = {9};
        QVERIFY(errorFrom([&] { (void)activationPatching(m, clean, noise, options); }).contains("noise position 9"));
        options.metric.target = m->config.vocab;
        same.tokens = encode(*m, "abce>");
        QVERIFY(errorFrom([&] { (void)activationPatching(m, clean, same, options); }).contains("vocabulary"));
        options.metric = {-1, 5, -1};
        const std::shared_ptr<const Model> rev = loadModel("reverse-rev");
        QVERIFY(errorFrom([&] { (void)activationPatching(rev, clean, same, options); }).contains("two streams"));
        const std::shared_ptr<const Model> s2s = loadModel("seq2seq-sort");
        QVERIFY(errorFrom([&] { (void)activationPatching(s2s, clean, same, options); }).contains("encoder-decoder"));
        std::atomic<bool> cancel = true;
        options.metric = {-1, encode(*m, "d").front(), encode(*m, "e").front()};
        options.cancel = &cancel;
        QVERIFY(errorFrom([&] { (void)activationPatching(m, clean, same, options); }).contains("cancelled"));
    }
};

QTEST_GUILESS_MAIN(TestActivationPatching)
#include "tst_activationpatching.moc"
