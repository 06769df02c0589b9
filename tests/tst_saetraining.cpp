// Sparse autoencoders on a model (features/saesite.h, saetraining.h, saefile.h): each site's tensor in the trace and
// the rows read from it; training on austen's activations lowers the unexplained variance well below a fresh
// dictionary's, the dictionary reading the model's own activations after its scale is folded in; loss recovered is 1
// for a dictionary that reconstructs exactly and 0 for one that writes the mean; the dictionary austen ships keeps
// the numbers it records; steering moves the logits as the rest of the network says, and the KV cache's steered run
// is the whole run's; SAELens directories
// of versions 5 and 6 (tests/tools/make_sae_reference.py) encode as the NumPy reference does; a saved dictionary loads
// as it was; a stopped run resumes to the uninterrupted run's dictionary; bad directories and hooks are refused by
// name, and nothing this program did not write is replaced.
#include "engine/engine.h"
#include "engine/generator.h"
#include "errortesting.h"
#include "features/dictionarytraining.h"
#include "features/saefile.h"
#include "features/saesplice.h"
#include "features/saetraining.h"
#include "features/steering.h"
#include "io/atomicfile.h"
#include "io/safetensors.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "saetesting.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "train/corpus.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <optional>

using namespace atlas;
using namespace atlas::testing;

namespace {

// A copy of a reference SAELens directory with its cfg.json replaced by `cfg`.
QString withConfig(const QTemporaryDir &tmp, const QString &from, const std::string &cfg)
{
    const QString dir = tmp.path() + "/" + from;
    QDir().mkpath(dir);
    QFile::copy(dataPath("sae/" + from + "/sae_weights.safetensors"), dir + "/sae_weights.safetensors");
    writeFileAtomically((dir + "/cfg.json").toStdString(), cfg);
    return dir;
}

} // namespace

class TestSaeTraining : public QObject
{
    Q_OBJECT

private slots:
    void eachSiteIsItsTensorInTheTrace()
    {
        const auto austen = loadModel("austen");
        QCOMPARE(saeSiteTensor(*austen, saeSiteFromHook("blocks.0.hook_resid_pre")), std::string("input"));
        QCOMPARE(saeSiteTensor(*austen, saeSiteFromHook("blocks.1.hook_resid_post")), std::string("layer.1.out"));
        QCOMPARE(saeSiteTensor(*austen, saeSiteFromHook("blocks.2.hook_resid_mid")), std::string("layer.2.mid"));
        QCOMPARE(saeSiteTensor(*austen, saeSiteFromHook("blocks.3.hook_mlp_out")), std::string("layer.3.mlp.down"));
        QCOMPARE(saeSiteTensor(*austen, saeSiteFromHook("blocks.3.hook_attn_out")), std::string("layer.3.attn.out"));
        const Model gemma = Model::load(dataPath("gemma2_tiny").toStdString()); // what the sandwich's norm adds
        QCOMPARE(saeSiteTensor(gemma, saeSiteFromHook("blocks.1.hook_attn_out")), std::string("layer.1.attn.out_norm"));
        QCOMPARE(saeSiteTensor(gemma, saeSiteFromHook("blocks.1.hook_mlp_out")), std::string("layer.1.mlp.out_norm"));
        QCOMPARE(saeSiteFromHook("blocks.12.hook_mlp_out").hookName(), std::string("blocks.12.hook_mlp_out"));
        // What the feed-forward reads (a transcoder's input): the norm before it, whatever the family calls it.
        QCOMPARE(saeSiteTensor(*austen, saeSiteFromHook("blocks.3.ln2.hook_normalized")), std::string("layer.3.ln_2"));
        QCOMPARE(saeSiteTensor(gemma, saeSiteFromHook("blocks.1.ln2.hook_normalized")), std::string("layer.1.ln_2"));
        QCOMPARE(
            saeSiteFromHook("blocks.2.ln2.hook_normalized").hookName(), std::string("blocks.2.ln2.hook_normalized"));
        QVERIFY(errorFrom([&] {
            (void)saeSiteTensor(*austen, saeSiteFromHook("blocks.4.hook_resid_pre"));
        }).contains("blocks 0 … 3"));
        const Model neox = Model::load(dataPath("neox_tiny").toStdString());
        QVERIFY(errorFrom([&] {
            (void)saeSiteTensor(neox, saeSiteFromHook("blocks.0.hook_resid_mid"));
        }).contains("no residual stream between"));
        for (const char *bad : {"blocks.1.hook_z", "blocks.x.hook_mlp_out", "layers.1.hook_mlp_out", "blocks.1"})
            QVERIFY2(errorFrom([&] { (void)saeSiteFromHook(bad); }).contains("names no site"), bad);
        QVERIFY(errorFrom([] { (void)saeSiteTensor(*loadModel("seq2seq-sort"), {}); }).contains("two stacks"));
    }

    // The rows are the trace's, window after window of the model's context.
    void theRowsAreTheTracesRows()
    {
        const auto austen = loadModel("austen");
        const std::string text(300, 'a'); // three windows of 128 characters, the last cut short
        const Tensor rows = siteActivations(austen, saeSiteFromHook("blocks.1.hook_resid_mid"), text, 200);
        QCOMPARE(rows.shape(), (Shape {200, 128}));
        Input second;
        second.tokens = tokenizerForModel(*austen)->encode(text.substr(128, 128));
        Engine run(austen, second);
        run.runToEnd();
        const Tensor &mid = run.trace().tensor("layer.1.mid");
        for (int64_t i = 0; i < 72 * 128; ++i)
            QCOMPARE(rows.data()[128 * 128 + i], mid.data()[i]);
        QVERIFY(errorFrom([&] {
            (void)siteActivations(austen, saeSiteFromHook("blocks.1.hook_mlp_out"), "", 10);
        }).contains("no tokens"));
        WorkBudget tight;
        tight.bytes = 1000;
        QVERIFY(errorFrom([&] {
            (void)siteActivations(austen, saeSiteFromHook("blocks.1.hook_mlp_out"), text, 200, {}, nullptr, tight);
        }).contains("activations of blocks.1.hook_mlp_out"));
    }

    // A TopK dictionary of 128 features fitted to 4000 of austen's rows leaves less than half the variance a fresh one
    // leaves unexplained, measured on the model's own (unscaled) activations it never saw.
    void trainingLowersTheUnexplainedVariance()
    {
        const auto austen = loadModel("austen");
        const SaeSite site = saeSiteFromHook("blocks.1.hook_resid_post");
        const Tensor rows = siteActivations(austen, site, corpusTraining(), 4000);
        const Tensor held = siteActivations(austen, site, corpusHeldOut(), 1000);
        SaeTrainingOptions o;
        o.width = 128;
        o.k = 8;
        o.steps = 400;
        o.batch = 128;
        std::vector<double> losses;
        const SparseAutoencoder sae = trainSparseAutoencoder(rows, o, [&](const SaeTrainingStep &s) {
            losses.push_back(s.loss);
            return true;
        });
        SparseAutoencoder fresh = initialSparseAutoencoder(o.architecture, 128, 128, 8, 0);
        RowVectorMap(fresh.bDec.data(), 128) = rows.matrix().colwise().mean();
        const SaeQuality before = saeQuality(fresh, held), after = saeQuality(sae, held);
        qInfo("unexplained variance on held-out rows: %.3f fresh, %.3f trained; loss %.2f at the first step, %.2f at "
              "the last",
            before.unexplained, after.unexplained, losses.front(), losses.back());
        QCOMPARE(int(losses.size()), 400);
        QVERIFY(after.unexplained < 0.5 * before.unexplained);
        QVERIFY(after.unexplained < 0.5);
        QVERIFY(losses.back() < 0.5 * losses.front());
        QCOMPARE(after.l0, 8.0);
        const std::atomic<bool> cancelled {true};
        QVERIFY(errorFrom([&] { (void)trainSparseAutoencoder(rows, o, {}, &cancelled); }).contains("cancelled"));
        o.width = 0;
        QVERIFY(errorFrom([&] { (void)trainSparseAutoencoder(rows, o); }).contains("width of 0"));
        o.width = 1 << 20; // 2 · 2^20 · 128 weights, with gradients and Adam's moments: about 4.3 GB
        WorkBudget tight;
        tight.bytes = 1e9;
        const QString refused = errorFrom([&] { (void)trainSparseAutoencoder(rows, o, {}, nullptr, tight); });
        QVERIFY2(
            refused.contains("training a dictionary of 1048576 features over 128 dimensions"), qPrintable(refused));
    }

    // A run stopped after a checkpoint goes on from the files it left to the dictionary the uninterrupted run makes,
    // bit for bit (both add in this machine's order): TopK with AuxK's dead features, and JumpReLU with its log θ.
    // The state of another run is refused naming what differs, a damaged one naming the tensor; the final save
    // leaves no state behind.
    void aStoppedRunGoesOnAsIfItHadNot_data()
    {
        QTest::addColumn<QString>("architecture");
        QTest::addColumn<QString>("writes");
        QTest::newRow("topk") << "topk"
                              << "";
        QTest::newRow("jumprelu") << "jumprelu"
                                  << "";
        QTest::newRow("jumprelu transcoder") << "jumprelu"
                                             << "blocks.1.hook_mlp_out";
    }

    void aStoppedRunGoesOnAsIfItHadNot()
    {
        QFETCH(QString, architecture);
        QFETCH(QString, writes);
        const auto austen = loadModel("austen");
        const std::optional<SaeSite> out
            = writes.isEmpty() ? std::nullopt : std::optional(saeSiteFromHook(writes.toStdString()));
        const SaeSite site = saeSiteFromHook(out ? "blocks.1.ln2.hook_normalized" : "blocks.1.hook_resid_post");
        const DictionaryText text {"a test's text", corpusTraining().substr(0, 3000), corpusHeldOut().substr(0, 600)};
        SaeTrainingOptions o;
        o.architecture = saeArchitectureFromName(architecture.toStdString());
        o.width = 64;
        o.k = 4;
        o.steps = 50;
        o.batch = 64;
        o.objective.sparsity = 0.5;
        o.objective.auxiliary = 1;
        o.deadAfterSteps = 3;
        o.checkpointEvery = 20;
        QTemporaryDir tmp;
        const std::string whole = tmp.filePath("whole").toStdString(), stopped = tmp.filePath("stopped").toStdString();
        const std::string state = "/training_state.safetensors";
        const TrainedDictionary straight
            = trainDictionary(austen, site, o, text, 2000, {}, nullptr, WorkBudget::process(), {whole}, out);
        QVERIFY(QFile::exists(QString::fromStdString(whole + state))); // the checkpoint of step 40
        saveSaeDirectory(whole, straight.directory);
        QVERIFY(!QFile::exists(QString::fromStdString(whole + state)));

        DictionaryTrainingProgress stopAt30;
        stopAt30.step = [](const SaeTrainingStep &s) { return s.step < 30; };
        const QString stop = errorFrom([&] {
            (void)trainDictionary(
                austen, site, o, text, 2000, stopAt30, nullptr, WorkBudget::process(), {stopped}, out);
        });
        QVERIFY2(stop.contains("cancelled"), qPrintable(stop));
        QCOMPARE(loadSaeDirectory(stopped).training["step"].get<int>(), 20);
        const TrainedDictionary resumed = trainDictionary(austen, site, o, text, 2000, {}, nullptr,
            WorkBudget::process(), {stopped, DictionaryCheckpoints::Resume::Yes}, out);
        QCOMPARE(resumed.directory.training["resumed_at_step"].get<int>(), 20);
        QCOMPARE(int(resumed.curve.size()), 30);
        QVERIFY(std::equal(resumed.curve.begin(), resumed.curve.end(), straight.curve.begin() + 20));
        const SparseAutoencoder &a = straight.directory.sae, &b = resumed.directory.sae;
        for (const auto &[x, y] : {std::pair {&a.wEnc, &b.wEnc}, {&a.bEnc, &b.bEnc}, {&a.wDec, &b.wDec},
                 {&a.bDec, &b.bDec}, {&a.threshold, &b.threshold}})
            QVERIFY(x->shape() == y->shape() && std::equal(x->data(), x->data() + x->numel(), y->data()));

        SaeTrainingOptions other = o;
        other.seed = 1;
        const QString refused = errorFrom([&] {
            (void)trainDictionary(austen, site, other, text, 2000, {}, nullptr, WorkBudget::process(),
                {stopped, DictionaryCheckpoints::Resume::Yes}, out);
        });
        QVERIFY2(refused.contains("training_state.safetensors: the state of another run ('seed' was 0, now 1)"),
            qPrintable(refused));
        const QString finished = errorFrom([&] {
            (void)trainDictionary(austen, site, o, text, 2000, {}, nullptr, WorkBudget::process(),
                {whole, DictionaryCheckpoints::Resume::Yes}, out);
        });
        QVERIFY2(finished.contains("holds no unfinished run to resume"), qPrintable(finished));

        // A damaged state: a count of quiet steps that is not a whole number.
        std::map<std::string, Tensor> tensors;
        std::map<std::string, std::string> metadata;
        {
            const SafetensorsFile file(stopped + state);
            for (const auto &[name, entry] : file.entries())
                tensors[name] = file.tensor(name);
            metadata = file.metadata();
        }
        tensors["quiet"].data()[5] = 2.5f;
        std::map<std::string, const Tensor *> refs;
        for (const auto &[name, t] : tensors)
            refs[name] = &t;
        writeSafetensors(stopped + state, refs, metadata);
        const QString damaged = errorFrom([&] {
            (void)trainDictionary(austen, site, o, text, 2000, {}, nullptr, WorkBudget::process(),
                {stopped, DictionaryCheckpoints::Resume::Yes}, out);
        });
        QVERIFY2(damaged.contains("tensor 'quiet' holds 2.5"), qPrintable(damaged));
        // Train… in the app: the state of another run is left for a fresh start.
        const TrainedDictionary fresh = trainDictionary(austen, site, other, text, 2000, {}, nullptr,
            WorkBudget::process(), {stopped, DictionaryCheckpoints::Resume::IfSameRun}, out);
        QVERIFY(!fresh.directory.training.contains("resumed_at_step"));
        QCOMPARE(int(fresh.curve.size()), 50);
    }

    // A dictionary that reconstructs exactly (x = ReLU(x) − ReLU(−x), width 2d) recovers all of the loss; one that
    // writes the site's mean whatever it reads recovers none of it.
    void lossRecoveredRunsFromNoneToAll()
    {
        const auto austen = loadModel("austen");
        const SaeSite site = saeSiteFromHook("blocks.2.hook_resid_mid");
        const std::string text = corpusHeldOut().substr(0, 300);
        const int64_t d = 128;
        const SparseAutoencoder exact = splitDictionary(d); // reconstructs every row exactly
        const SpliceLosses all = spliceLosses(austen, exact, site, site, text, 1000);
        QCOMPARE(all.tokens, int64_t(297)); // windows of 128, 128 and 44 tokens: 127 + 127 + 43 predictions
        QVERIFY(all.meanAblated > all.clean + 1);
        QVERIFY(std::abs(all.spliced - all.clean) < 1e-5);
        QVERIFY(std::abs(all.recovered() - 1) < 1e-5);

        SparseAutoencoder mean = exact;
        mean.wDec = Tensor({2 * d, d});
        RowVectorMap(mean.bDec.data(), d) = siteActivations(austen, site, text, 1000).matrix().colwise().mean();
        const SpliceLosses none = spliceLosses(austen, mean, site, site, text, 1000);
        QVERIFY2(std::abs(none.recovered()) < 1e-3, qPrintable(QString::number(none.recovered())));
        QVERIFY(errorFrom([&] {
            (void)spliceLosses(loadModel("austen-mlm"), exact, site, site, text, 100);
        }).contains("predicts the next token"));
        SparseAutoencoder narrow = initialSparseAutoencoder(SaeArchitecture::TopK, 64, 32, 4, 0);
        QVERIFY(
            errorFrom([&] { (void)spliceLosses(austen, narrow, site, site, text, 100); }).contains("64 dimensions"));
    }

    // austen ships the dictionary train-sae made (resources/models/austen/saes/): measured again on the same held-out
    // text, it keeps the numbers its cfg.json records.
    void theShippedDictionaryKeepsItsNumbers()
    {
        const auto austen = loadModel("austen");
        QCOMPARE(modelDictionaries(*austen), std::vector<std::string>({"blocks.2.hook_resid_post"}));
        const SaeDirectory d = loadDictionary(dictionaryPath(*austen, "blocks.2.hook_resid_post"));
        QCOMPARE(d.modelName, std::string("austen"));
        const nlohmann::json &held = d.training["held_out"];
        const Tensor rows = siteActivations(austen, d.site, corpusHeldOut(), held["rows"].get<int64_t>());
        const SaeQuality q = saeQuality(d.sae, rows);
        qInfo("held out: %.4f unexplained (recorded %.4f), L0 %.2f, %d dead, %d dense", q.unexplained,
            held["unexplained_variance"].get<double>(), q.l0, q.dead, q.dense);
        QVERIFY(std::abs(q.unexplained - held["unexplained_variance"].get<double>()) < 1e-4);
        QCOMPARE(q.l0, held["l0"].get<double>());
        QVERIFY(std::abs(q.dead - held["dead"].get<int>()) <= 2);
        QVERIFY(std::abs(q.dense - held["dense"].get<int>()) <= 2);
        const SpliceLosses l = spliceLosses(austen, d.sae, d.site, d.site, corpusHeldOut(), 16 * 128);
        QCOMPARE(l.tokens, held["loss"]["tokens"].get<int64_t>());
        QVERIFY(std::abs(l.recovered() - held["loss"]["recovered"].get<double>()) < 1e-4);
        QVERIFY(std::abs(l.spliced - held["loss"]["spliced"].get<double>()) < 1e-4);
        QVERIFY(modelDictionaries(*loadModel("reverse")).empty());
        QCOMPARE(dictionaryPath(*austen, "no such"), std::string("no such"));
    }

    // Steering the stream after austen's last block: the logits change exactly as the rest of the network, the final
    // LayerNorm and the unembedding tied to the embedding, maps x + s·v, computed here by hand from the weights.
    // Strength 0, or clamping a feature at the value it has, changes nothing; a difference of means is the means'.
    void steeringMovesTheLogitsAsTheRestOfTheNetworkSays()
    {
        const auto austen = loadModel("austen");
        Input input;
        input.tokens = tokenizerForModel(*austen)->encode("It is a truth");
        const SaeDirectory d = loadDictionary(dictionaryPath(*austen, "blocks.2.hook_resid_post"));
        Steering s;
        s.site = saeSiteFromHook("blocks.3.hook_resid_post");
        s.direction = featureDirection(d.sae, 187);
        s.strength = 6;
        const Tensor got = steeredLogits(austen, input, s);
        Engine run(austen, input);
        run.runToEnd();
        const Tensor &x = run.trace().tensor("layer.3.out"), &own = run.trace().tensor("logits");
        const auto parameters = std::as_const(*austen).parameters();
        const Tensor &gamma = *parameters.at("ln_f.weight"), &beta = *parameters.at("ln_f.bias"),
                     &wte = *parameters.at("wte.weight");
        const int64_t T = x.dim(0), D = x.dim(1), V = wte.dim(0);
        double worst = 0;
        for (int64_t t = 0; t < T; ++t) {
            Eigen::VectorXd y(D);
            for (int64_t i = 0; i < D; ++i)
                y[i] = double(x.data()[t * D + i]) + 6.0 * double(s.direction.data()[i]);
            const double mean = y.mean(), var = (y.array() - mean).square().mean();
            Eigen::VectorXd n(D);
            for (int64_t i = 0; i < D; ++i)
                n[i] = (y[i] - mean) / std::sqrt(var + double(austen->config.lnEpsilon)) * gamma.data()[i]
                    + beta.data()[i];
            for (int64_t v = 0; v < V; ++v) {
                double logit = 0;
                for (int64_t i = 0; i < D; ++i)
                    logit += n[i] * double(wte.data()[v * D + i]);
                worst = std::max(worst, std::abs(logit - double(got.data()[t * V + v])) / (1 + std::abs(logit)));
            }
        }
        qInfo("steered logits against the final norm and unembedding by hand: worst relative error %.2g", worst);
        QVERIFY(worst < 1e-5);
        QVERIFY(!(got.matrix() == own.matrix()));

        s.strength = 0;
        QVERIFY(steeredLogits(austen, input, s).matrix() == own.matrix());
        Steering clamp;
        clamp.site = d.site;
        clamp.dictionary = std::make_shared<const SparseAutoencoder>(d.sae);
        clamp.clampFeature = 187;
        Input quietly;
        quietly.tokens = tokenizerForModel(*austen)->encode("She spoke quietly");
        Tensor rows = siteRows(austen, d.site, quietly);
        const Tensor before = rows;
        clamp.clampValue = 0;
        applySteering(rows, clamp); // where #187 is 0 the row stays; where it fires, its part is taken out
        const Tensor f = d.sae.encode(before);
        for (int64_t t = 0; t < rows.dim(0); ++t)
            if (f.data()[t * 512 + 187] == 0.0f)
                QVERIFY(rows.matrix().row(t) == before.matrix().row(t));
        QVERIFY(!(rows.matrix() == before.matrix())); // #187 fires on the y of "quietly"
        const std::vector<int> plain = steeredContinuation(austen, input.tokens, s, 8);
        Generator generator(austen, input.tokens, {});
        for (int expected : plain)
            QCOMPARE(generator.generate(), expected); // strength 0: the model's own greedy continuation
        const Tensor v = differenceOfMeans(austen, s.site, {"She smiled"}, {"He frowned"});
        Input a, b;
        a.tokens = tokenizerForModel(*austen)->encode("She smiled");
        b.tokens = tokenizerForModel(*austen)->encode("He frowned");
        const Eigen::RowVectorXf want = siteRows(austen, s.site, a).matrix().colwise().mean()
            - siteRows(austen, s.site, b).matrix().colwise().mean();
        QVERIFY((ConstRowVectorMap(v.data(), v.numel()) - want).cwiseAbs().maxCoeff() < 1e-5f);
        QVERIFY(errorFrom([&] { (void)featureDirection(d.sae, 512); }).contains("features 0 … 511"));
    }

    // The KV cache's run with the site steered as each position is fed gives, at every step, the logits of a whole
    // run of the text so far with the site steered: at each of the five sites, and with a feature clamped. A steering
    // of strength 0 samples what the model's own generator samples under the same seed.
    void aCachedSteeredRunIsTheWholeRunSteered_data()
    {
        QTest::addColumn<QString>("hook");
        QTest::addColumn<bool>("clamp");
        for (const char *hook : {"blocks.0.hook_resid_pre", "blocks.1.hook_resid_mid", "blocks.2.hook_resid_post",
                 "blocks.3.hook_resid_post", "blocks.1.hook_attn_out", "blocks.2.hook_mlp_out"})
            QTest::newRow(hook) << hook << false;
        QTest::newRow("clamped at blocks.2.hook_resid_post") << "blocks.2.hook_resid_post" << true;
    }
    void aCachedSteeredRunIsTheWholeRunSteered()
    {
        QFETCH(QString, hook);
        QFETCH(bool, clamp);
        const auto austen = loadModel("austen");
        const SaeDirectory d = loadDictionary(dictionaryPath(*austen, "blocks.2.hook_resid_post"));
        Steering s;
        s.site = saeSiteFromHook(hook.toStdString());
        if (clamp) {
            s.dictionary = std::make_shared<const SparseAutoencoder>(d.sae);
            s.clampFeature = 187;
            s.clampValue = 5;
        } else {
            s.direction = featureDirection(d.sae, 187);
            s.strength = 6;
        }
        Input input;
        input.tokens = tokenizerForModel(*austen)->encode("It is a truth");
        Generator cached = steeredGenerator(austen, input.tokens, s);
        const int64_t V = austen->config.vocab;
        double worst = 0;
        for (int step = 0; step < 4; ++step) {
            const Tensor whole = steeredLogits(austen, input, s);
            const float *row = whole.data() + (whole.dim(0) - 1) * V;
            for (int64_t v = 0; v < V; ++v)
                worst = std::max(
                    worst, std::abs(double(row[v]) - cached.lastLogits().data()[v]) / (1 + std::abs(double(row[v]))));
            input.tokens.push_back(cached.generate());
        }
        qInfo("cached against whole runs over 4 steps: worst relative difference %.2g", worst);
        QVERIFY(worst < 1e-4);
        // The steering moved this run: the model's own logits differ.
        Generator own(austen, input.tokens);
        QVERIFY(!std::equal(own.lastLogits().data(), own.lastLogits().data() + V, cached.lastLogits().data()));

        Steering none = s;
        none.strength = 0;
        none.dictionary = nullptr;
        none.clampFeature = -1;
        none.direction = featureDirection(d.sae, 187);
        SamplingOptions sampling;
        sampling.temperature = 1.2f;
        sampling.topP = 0.9;
        sampling.seed = 7;
        Generator plain(austen, input.tokens, sampling);
        std::vector<int> want;
        for (int i = 0; i < 12; ++i)
            want.push_back(plain.generate());
        QCOMPARE(steeredContinuation(austen, input.tokens, none, 12, sampling), want);
    }

    void anEditOfATensorNoBlockMakesIsRefused()
    {
        const auto austen = loadModel("austen");
        QVERIFY(errorFrom([&] {
            Generator(austen, {1, 2}, {}, StreamEdit {"layer.2.attn.probs", [](Tensor &) {}});
        }).contains("no block makes layer.2.attn.probs one position at a time"));
        QVERIFY(errorFrom([&] {
            Generator(loadModel("seq2seq-sort"), {1}, {}, StreamEdit {"dec.layer.0.out", [](Tensor &) {}});
        }).contains("not an encoder-decoder"));
    }

    // SAELens's two cfg.json forms, written by the reference script, encode as NumPy does.
    void saeLensDirectoriesEncodeAsTheReference_data()
    {
        QTest::addColumn<QString>("directory");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("hook");
        QTest::newRow("version 6, TopK") << "saelens_v6_topk" << 1 << "blocks.1.hook_resid_post";
        QTest::newRow("version 5, TopK") << "saelens_v5_topk" << 1 << "blocks.0.hook_mlp_out";
        QTest::newRow("version 6, JumpReLU") << "saelens_v6_jumprelu" << 3 << "blocks.1.hook_resid_post";
    }

    void saeLensDirectoriesEncodeAsTheReference()
    {
        QFETCH(QString, directory);
        QFETCH(int, index);
        QFETCH(QString, hook);
        const SaeDirectory d = loadSaeDirectory(dataPath("sae/" + directory).toStdString());
        QCOMPARE(QString::fromStdString(d.site.hookName()), hook);
        QCOMPARE(d.modelName, std::string("llama_tiny"));
        const Tensor f = d.sae.encode(referenceInput(index));
        for (int r = 0; r < 5; ++r) {
            const std::vector<double> want = referenceRow(index, "f", r);
            for (int i = 0; i < 10; ++i)
                QVERIFY(std::abs(f.data()[r * 10 + i] - want[size_t(i)]) < 1e-5 * (1 + std::abs(want[size_t(i)])));
        }
    }

    // Gemma Scope's params.npz (np.savez, written by the reference script) encodes as NumPy does; a compressed archive,
    // a cut one and one without a threshold are refused by name.
    void gemmaScopeParamsEncodeAsTheReference()
    {
        const SaeSite site = saeSiteFromHook("blocks.3.hook_resid_post");
        const SaeDirectory d = loadGemmaScope(dataPath("sae/gemma_scope/params.npz").toStdString(), site);
        QVERIFY(d.sae.architecture == SaeArchitecture::JumpRelu && !d.sae.applyDecoderBiasToInput);
        QVERIFY(d.site == site && !d.writes);
        // At the feed-forward's input it is one of Gemma Scope's transcoders, writing the feed-forward's output.
        const SaeDirectory t = loadDictionary(
            dataPath("sae/gemma_scope/params.npz").toStdString(), saeSiteFromHook("blocks.3.ln2.hook_normalized"));
        QVERIFY(t.writes && t.writes->hookName() == "blocks.3.hook_mlp_out");
        const Tensor f = d.sae.encode(referenceInput(2));
        for (int r = 0; r < 5; ++r) {
            const std::vector<double> want = referenceRow(2, "f", r);
            for (int i = 0; i < 10; ++i)
                QVERIFY(std::abs(f.data()[r * 10 + i] - want[size_t(i)]) < 1e-5 * (1 + std::abs(want[size_t(i)])));
        }
        QVERIFY(errorFrom([&] {
            (void)loadGemmaScope(dataPath("sae/gemma_scope/compressed.npz").toStdString(), site);
        }).contains("np.savez_compressed"));
        QVERIFY(errorFrom([&] {
            (void)loadGemmaScope(dataPath("sae/gemma_scope/no_threshold.npz").toStdString(), site);
        }).contains("no array threshold"));
        QTemporaryDir tmp;
        const std::string whole = readFile(dataPath("sae/gemma_scope/params.npz").toStdString());
        for (const size_t keep : {size_t(10), whole.size() / 2, whole.size() - 30}) {
            const std::string cut = (tmp.path() + "/cut.npz").toStdString();
            writeFileAtomically(cut, whole.substr(0, keep));
            const QString why = errorFrom([&] { (void)loadGemmaScope(cut, site); });
            QVERIFY2(why.contains("cut.npz") && why.contains("archive"), qPrintable(why));
        }
    }

    void aSavedDictionaryLoadsAsItWasSaved()
    {
        QTemporaryDir tmp;
        const std::string dir = (tmp.path() + "/sae").toStdString();
        SaeDirectory saved;
        saved.sae = initialSparseAutoencoder(SaeArchitecture::JumpRelu, 6, 12, 0, 3);
        saved.sae.threshold.data()[5] = 0.25f;
        saved.site = saeSiteFromHook("blocks.2.hook_attn_out");
        saved.modelName = "austen";
        saved.training = {{"steps", 40}};
        saveSaeDirectory(dir, saved);
        const SaeDirectory loaded = loadSaeDirectory(dir);
        QVERIFY(loaded.sae.architecture == SaeArchitecture::JumpRelu);
        QVERIFY(loaded.site == saved.site);
        QCOMPARE(loaded.modelName, std::string("austen"));
        QCOMPARE(loaded.training["steps"].get<int>(), 40);
        QVERIFY(loaded.sae.wEnc.matrix() == saved.sae.wEnc.matrix());
        QVERIFY(loaded.sae.wDec.matrix() == saved.sae.wDec.matrix());
        QCOMPARE(loaded.sae.threshold.data()[5], 0.25f);
        saveSaeDirectory(dir, saved); // its own output is replaced
        // a directory it did not write is not
        const std::string other = (tmp.path() + "/notes").toStdString();
        std::filesystem::create_directory(other);
        writeFileAtomically(other + "/mine.txt", "keep me");
        QVERIFY(errorFrom([&] { saveSaeDirectory(other, saved); }).contains("notes"));
        QCOMPARE(QString::fromStdString(readFile(other + "/mine.txt")), QString("keep me"));
    }

    void badDirectoriesAreRefusedByName()
    {
        QTemporaryDir tmp;
        const auto refusal = [&](const std::string &cfg) {
            return errorFrom([&] { (void)loadSaeDirectory(withConfig(tmp, "saelens_v6_topk", cfg).toStdString()); });
        };
        const std::string meta = R"("meta": {"hook_name": "blocks.1.hook_resid_post"})";
        QVERIFY(refusal(R"({"architecture": "topk", "k": 3, "d_in": 6, "d_sae": 10})").contains("meta.hook_name"));
        QVERIFY(refusal(R"({"architecture": "topk", "d_in": 6, "d_sae": 10, "k": 3, "meta": {"hook_name": "h.1"}})")
                    .contains("names no site"));
        QVERIFY(refusal(R"({"architecture": "gated", )" + meta + "}").contains("architecture"));
        QVERIFY(refusal(R"({"architecture": "topk", )" + meta + "}").contains("'k'"));
        QVERIFY(refusal(
            R"({"architecture": "topk", "k": 3, "normalize_activations": "expected_average_only_in", )" + meta + "}")
                    .contains("normalize_activations"));
        QVERIFY(refusal(R"({"architecture": "topk", "k": 3, "d_in": 7, )" + meta + "}").contains("d_in 7"));
        QVERIFY(refusal(R"({"architecture": "jumprelu", )" + meta + "}").contains("no tensor threshold"));
        QVERIFY(refusal("{not json").contains("cfg.json"));
        const QString noWeights = tmp.path() + "/empty";
        QDir().mkpath(noWeights);
        QVERIFY(errorFrom([&] { (void)loadSaeDirectory(noWeights.toStdString()); }).contains("cfg.json"));
        // wrong shapes: b_dec of another length
        const std::string dir = (tmp.path() + "/short").toStdString();
        std::filesystem::create_directory(dir);
        const Tensor wEnc({6, 10}), bEnc({10}), wDec({10, 6}), bDec({5});
        writeSafetensors(
            dir + "/sae_weights.safetensors", {{"W_enc", &wEnc}, {"b_enc", &bEnc}, {"W_dec", &wDec}, {"b_dec", &bDec}});
        writeFileAtomically(dir + "/cfg.json", R"({"architecture": "standard", )" + meta + "}");
        QVERIFY(errorFrom([&] { (void)loadSaeDirectory(dir); }).contains("b_dec is [5]"));
    }
};

QTEST_GUILESS_MAIN(TestSaeTraining)
#include "tst_saetraining.moc"
