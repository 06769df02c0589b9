// Transcoders (features/saefile.h's SaeDirectory::writes): one that writes the feed-forward output's mean loses what
// mean ablation loses; SAELens's transcoder folders (tests/tools/make_sae_reference.py) encode and decode as NumPy
// does, save and load again, and bad ones are refused by name; steering adds a transcoder's row where it writes and
// refuses to clamp it; a transcoder trained on austen predicts a feed-forward's output from its input.
#include "errortesting.h"
#include "features/dictionarytraining.h"
#include "features/features.h"
#include "features/saefile.h"
#include "features/saesplice.h"
#include "features/saetraining.h"
#include "features/steering.h"
#include "io/atomicfile.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "saetesting.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "train/corpus.h"

#include <QTemporaryDir>
#include <QTest>

using namespace atlas;
using namespace atlas::testing;

class TestTranscoders : public QObject
{
    Q_OBJECT

private slots:
    // A JumpReLU transcoder fitted to 4000 of austen's rows predicts block 1's feed-forward output from its input far
    // better than a fresh one (which explains none of its variance), on held-out text, and keeps much of the loss
    // spliced in the feed-forward's place (measured 32.6 % unexplained and 65 % recovered, at 300 steps; the bounds
    // leave room for every order of the sums). It is saved as SAELens's jumprelu_transcoder. TopK and sites in the
    // wrong order are refused.
    void aTranscoderLearnsTheFeedForward()
    {
        const auto austen = loadModel("austen");
        const SaeSite in = saeSiteFromHook("blocks.1.ln2.hook_normalized"),
                      out = saeSiteFromHook("blocks.1.hook_mlp_out");
        SaeTrainingOptions o;
        o.architecture = SaeArchitecture::JumpRelu;
        o.width = 128;
        o.steps = 300;
        o.batch = 128;
        o.objective.sparsity = 0.5;
        const DictionaryText text = builtInCorpusText();
        const TrainedDictionary t
            = trainDictionary(austen, in, o, text, 4000, {}, nullptr, WorkBudget::process(), {}, out);
        qInfo("transcoder: %.3f of the variance unexplained, %.3f of the loss recovered", t.heldOut.quality.unexplained,
            t.heldOut.losses.recovered());
        QVERIFY(t.directory.site == in && t.directory.writes == out);
        QVERIFY(!t.directory.sae.applyDecoderBiasToInput);
        QVERIFY(t.heldOut.quality.unexplained < 0.6);
        QVERIFY(t.heldOut.hasLosses && t.heldOut.losses.recovered() > 0.4);
        QVERIFY(t.curve.back() < t.curve.front());
        QTemporaryDir tmp;
        const std::string dir = tmp.filePath("transcoder").toStdString();
        saveSaeDirectory(dir, t.directory);
        const SaeDirectory again = loadSaeDirectory(dir);
        QVERIFY(again.writes == out);
        QCOMPARE(nlohmann::json::parse(readFile(dir + "/cfg.json"))["architecture"].get<std::string>(),
            std::string("jumprelu_transcoder"));

        o.architecture = SaeArchitecture::TopK;
        QString why = errorFrom(
            [&] { (void)trainDictionary(austen, in, o, text, 100, {}, nullptr, WorkBudget::process(), {}, out); });
        QVERIFY2(why.contains("no TopK transcoder"), qPrintable(why));
        o.architecture = SaeArchitecture::Standard;
        why = errorFrom(
            [&] { (void)trainDictionary(austen, out, o, text, 100, {}, nullptr, WorkBudget::process(), {}, in); });
        QVERIFY2(why.contains("does not come before"), qPrintable(why));
    }

    // A transcoder's output replaces the feed-forward's output, read from its input: one that writes that output's mean
    // whatever it reads loses what mean ablation loses, and explains none of the output's variance; an SAE of the same
    // weights at the feed-forward's input would write the mean of another tensor there.
    void aTranscoderReplacesTheFeedForwardsOutput()
    {
        const auto austen = loadModel("austen");
        const SaeSite in = saeSiteFromHook("blocks.1.ln2.hook_normalized"),
                      out = saeSiteFromHook("blocks.1.hook_mlp_out");
        const std::string text = corpusHeldOut().substr(0, 300);
        const int64_t d = 128;
        SparseAutoencoder mean = splitDictionary(d);
        mean.applyDecoderBiasToInput = false;
        mean.wDec = Tensor({2 * d, d});
        RowVectorMap(mean.bDec.data(), d) = siteActivations(austen, out, text, 1000).matrix().colwise().mean();
        const SpliceLosses l = spliceLosses(austen, mean, in, out, text, 1000);
        QVERIFY(l.meanAblated > l.clean + 0.01);
        QVERIFY2(std::abs(l.spliced - l.meanAblated) < 1e-5 * l.meanAblated,
            qPrintable(QString("%1 against %2").arg(l.spliced).arg(l.meanAblated)));
        const HeldOutMeasures m = measureHeldOut(austen, mean, in, out, text, 1000);
        QCOMPARE(m.rows, int64_t(300));
        QVERIFY2(std::abs(m.quality.unexplained - 1) < 1e-5, qPrintable(QString::number(m.quality.unexplained)));
        QVERIFY(std::abs(measureHeldOut(austen, mean, in, in, text, 1000).quality.unexplained - 1) > 0.01);

        // Steering with a transcoder's feature adds its row where it writes; clamping one is refused.
        const SaeDirectory t {mean, in, "austen", {}, out};
        QCOMPARE(t.sitesName(), std::string("blocks.1.ln2.hook_normalized \u2192 blocks.1.hook_mlp_out"));
        QTemporaryDir tmp;
        const std::string saved = (tmp.path() + "/transcoder").toStdString();
        saveSaeDirectory(saved, t);
        ViewSpec spec;
        spec.set(views::features::kSae, saved);
        spec.set(views::features::kFeature, 3);
        const std::vector<int> prompt = tokenizerForModel(*austen)->encode("She spoke");
        const NamedSteering s = views::features::specSteering(austen, spec, prompt);
        QVERIFY(s.steering.site == out);
        QCOMPARE(s.description, std::string("feature 3 \u00d7 8 at blocks.1.hook_mlp_out"));
        spec.set(views::features::kSteerClamp, true);
        const QString why = errorFrom([&] { (void)views::features::specSteering(austen, spec, prompt); });
        QVERIFY2(why.contains("transcoder") && why.contains("not clamped"), qPrintable(why));
    }

    // SAELens's transcoders (written by the reference script) read the feed-forward's input and write its output, and
    // encode and decode as NumPy does without shifting their input by b_dec; saved, they load as they were; a skip
    // transcoder and one that does not say where it writes are refused by name.
    void saeLensTranscodersReadOneSiteAndWriteAnother_data()
    {
        QTest::addColumn<QString>("directory");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("architecture");
        QTest::newRow("ReLU") << "transcoder_relu" << 4 << "transcoder";
        QTest::newRow("JumpReLU") << "transcoder_jumprelu" << 2 << "jumprelu_transcoder";
    }

    void saeLensTranscodersReadOneSiteAndWriteAnother()
    {
        QFETCH(QString, directory);
        QFETCH(int, index);
        QFETCH(QString, architecture);
        const std::string path = dataPath("sae/" + directory).toStdString();
        const SaeDirectory d = loadSaeDirectory(path);
        QCOMPARE(d.site.hookName(), std::string("blocks.1.ln2.hook_normalized"));
        QVERIFY(d.writes && d.writes->hookName() == "blocks.1.hook_mlp_out");
        QVERIFY(!d.sae.applyDecoderBiasToInput);
        const Tensor f = d.sae.encode(referenceInput(index)), yHat = d.sae.decode(f);
        for (int r = 0; r < 5; ++r) {
            const std::vector<double> wantF = referenceRow(index, "f", r), wantY = referenceRow(index, "x_hat", r);
            for (int i = 0; i < 10; ++i)
                QVERIFY(std::abs(f.data()[r * 10 + i] - wantF[size_t(i)]) < 1e-5 * (1 + std::abs(wantF[size_t(i)])));
            for (int i = 0; i < 6; ++i)
                QVERIFY(std::abs(yHat.data()[r * 6 + i] - wantY[size_t(i)]) < 1e-5 * (1 + std::abs(wantY[size_t(i)])));
        }
        QTemporaryDir tmp;
        const std::string saved = (tmp.path() + "/saved").toStdString();
        saveSaeDirectory(saved, d);
        const nlohmann::json cfg = nlohmann::json::parse(readFile(saved + "/cfg.json"));
        QCOMPARE(QString::fromStdString(cfg["architecture"].get<std::string>()), architecture);
        QCOMPARE(cfg["hook_name_out"].get<std::string>(), std::string("blocks.1.hook_mlp_out"));
        const SaeDirectory again = loadSaeDirectory(saved);
        QVERIFY(again.site == d.site && again.writes == d.writes && again.sae.architecture == d.sae.architecture);

        nlohmann::json skip = cfg;
        skip["architecture"] = "skip_transcoder";
        writeFileAtomically(saved + "/cfg.json", skip.dump());
        QString why = errorFrom([&] { (void)loadSaeDirectory(saved); });
        QVERIFY2(why.contains("skip_transcoder") && why.contains("W_skip"), qPrintable(why));
        nlohmann::json nowhere = cfg;
        nowhere.erase("hook_name_out");
        writeFileAtomically(saved + "/cfg.json", nowhere.dump());
        why = errorFrom([&] { (void)loadSaeDirectory(saved); });
        QVERIFY2(why.contains("cfg.json") && why.contains("hook_name_out"), qPrintable(why));
    }
};

QTEST_MAIN(TestTranscoders)
#include "tst_transcoders.moc"
