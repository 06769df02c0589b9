// Feature dashboards (features/featuredashboard.h, featurecorpus.h): the corpus pass against every feature's
// activations worked out from whole runs of each window, for a dictionary whose features are known from the trace and
// for the shipped TopK dictionary; the disk cache's round trip and what it does with a file of another key or a
// broken one; the cache kept to its limit; where a pass comes from (run, memory, disk); the budget's refusal; the logit
// effects against the model's own output head, differentiated along the feature's direction (LayerNorm, RMSNorm,
// Gemma's 1 + γ); and the nearest features against cosines worked out here.
#include "engine/engine.h"
#include "errortesting.h"
#include "features/featurecorpus.h"
#include "features/saesite.h"
#include "features/siterun.h"
#include "io/safetensors.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "saetesting.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "train/corpus.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <tuple>

using namespace atlas;
using namespace atlas::testing;

namespace {

std::vector<int> corpusTokens(const Model &model, size_t count)
{
    std::vector<int> tokens = tokenizerForModel(model)->encode(corpusTraining().substr(0, 4 * count));
    tokens.resize(std::min(tokens.size(), count));
    return tokens;
}

// A pass of the split dictionary over 200 of austen's corpus tokens, 4 examples a feature: what the cache's tests
// write.
FeatureCorpusStats smallPass()
{
    const auto model = loadModel("austen");
    FeatureCorpusOptions o;
    o.top = 4;
    return featureCorpusPass(
        model, splitDictionary(128), saeSiteFromHook("blocks.1.hook_mlp_out"), corpusTokens(*model, 200), o);
}

// Every feature's activation on every token, each window of the model's context run whole: [N, F].
std::vector<std::vector<float>> activationsByWindow(std::shared_ptr<const Model> model, const SparseAutoencoder &sae,
    const SaeSite &site, const std::vector<int> &tokens)
{
    const std::string tensor = saeSiteTensor(*model, site);
    std::vector<std::vector<float>> out;
    const size_t window = size_t(model->config.context);
    for (size_t begin = 0; begin < tokens.size(); begin += window) {
        Input input;
        input.tokens.assign(
            tokens.begin() + ptrdiff_t(begin), tokens.begin() + ptrdiff_t(std::min(tokens.size(), begin + window)));
        Engine run(model, input);
        run.runToEnd();
        const Tensor f = sae.encode(run.trace().tensor(tensor));
        for (int64_t t = 0; t < f.dim(0); ++t)
            out.emplace_back(f.data() + t * f.dim(1), f.data() + (t + 1) * f.dim(1));
    }
    return out;
}

// The pass's every number against the activations: each feature's active count, histogram, strongest examples (the
// earlier token first on a tie) and the activations around them (NaN outside the example's window).
QString passMismatch(const FeatureCorpusStats &s, const std::vector<std::vector<float>> &acts, int window)
{
    const int64_t N = int64_t(acts.size());
    if (int64_t(s.tokens.size()) != N)
        return QString("read %1 tokens, not %2").arg(s.tokens.size()).arg(N);
    for (int64_t f = 0; f < s.features; ++f) {
        std::vector<std::pair<float, int64_t>> active;
        std::vector<float> histogram(FeatureCorpusStats::kBins, 0.0f);
        for (int64_t t = 0; t < N; ++t)
            if (acts[size_t(t)][size_t(f)] > 0) {
                active.emplace_back(acts[size_t(t)][size_t(f)], t);
                histogram[size_t(FeatureCorpusStats::binOf(acts[size_t(t)][size_t(f)]))] += 1;
            }
        if (s.activeCount[size_t(f)] != int64_t(active.size()))
            return QString("feature %1: active on %2 tokens, not %3")
                .arg(f)
                .arg(s.activeCount[size_t(f)])
                .arg(active.size());
        if (!std::equal(histogram.begin(), histogram.end(), s.histogram.begin() + f * FeatureCorpusStats::kBins))
            return QString("feature %1: another histogram").arg(f);
        std::stable_sort(active.begin(), active.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
        for (int i = 0; i < s.top; ++i) {
            const float value = s.topActivation[size_t(f * s.top + i)];
            const int64_t at = s.topToken[size_t(f * s.top + i)];
            if (size_t(i) >= active.size()) {
                if (at != -1 || value != 0)
                    return QString("feature %1: example %2 where there is none").arg(f).arg(i);
                continue;
            }
            if (value != active[size_t(i)].first || at != active[size_t(i)].second)
                return QString("feature %1, example %2: %3 at %4, not %5 at %6")
                    .arg(f)
                    .arg(i)
                    .arg(value)
                    .arg(at)
                    .arg(active[size_t(i)].first)
                    .arg(active[size_t(i)].second);
            for (int c = 0; c < s.contextSize(); ++c) {
                const int64_t u = at - s.before + c;
                const bool inRun = u >= 0 && u < N && u / window == at / window;
                const float got = s.context[size_t((f * s.top + i) * s.contextSize() + c)];
                if (inRun ? got != acts[size_t(u)][size_t(f)] : !std::isnan(got))
                    return QString("feature %1, example %2: token %3 of its context is %4")
                        .arg(f)
                        .arg(i)
                        .arg(u)
                        .arg(got);
            }
        }
    }
    return {};
}

bool sameStats(const FeatureCorpusStats &a, const FeatureCorpusStats &b)
{
    const auto sameFloats = [](const std::vector<float> &x, const std::vector<float> &y) {
        return std::equal(x.begin(), x.end(), y.begin(), y.end(),
            [](float p, float q) { return p == q || (std::isnan(p) && std::isnan(q)); });
    };
    return std::tie(a.features, a.top, a.before, a.after, a.window, a.tokens, a.topToken, a.activeCount)
        == std::tie(b.features, b.top, b.before, b.after, b.window, b.tokens, b.topToken, b.activeCount)
        && sameFloats(a.topActivation, b.topActivation) && sameFloats(a.context, b.context)
        && sameFloats(a.histogram, b.histogram);
}

} // namespace

class TestFeatureDashboard : public QObject
{
    Q_OBJECT

private slots:
    void thePassKeepsEveryFeaturesStrongestExamplesCountsAndHistogram()
    {
        const auto model = loadModel("austen");
        const std::vector<int> tokens = corpusTokens(*model, 300); // windows of 128, 128 and 44
        FeatureCorpusOptions o;
        o.top = 6;
        o.before = 5;
        o.after = 3;
        const SparseAutoencoder split = splitDictionary(128);
        const SaeSite mid = saeSiteFromHook("blocks.2.hook_resid_mid");
        std::vector<std::pair<int64_t, int64_t>> reported;
        const FeatureCorpusStats s = featureCorpusPass(model, split, mid, tokens, o, [&](int64_t done, int64_t total) {
            reported.emplace_back(done, total);
            return true;
        });
        QCOMPARE(s.window, 128);
        QVERIFY(reported.front() == std::make_pair(int64_t(0), int64_t(300)));
        QVERIFY(reported.back() == std::make_pair(int64_t(300), int64_t(300)));
        QString why = passMismatch(s, activationsByWindow(model, split, mid, tokens), 128);
        QVERIFY2(why.isEmpty(), qPrintable(why));

        const SaeDirectory shipped = loadDictionary(dictionaryPath(*model, "blocks.2.hook_resid_post"));
        o.top = 20;
        const FeatureCorpusStats topk = featureCorpusPass(model, shipped.sae, shipped.site, tokens, o);
        why = passMismatch(topk, activationsByWindow(model, shipped.sae, shipped.site, tokens), 128);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        int64_t active = 0;
        for (const int64_t n : topk.activeCount)
            active += n;
        QCOMPARE(active, int64_t(300) * shipped.sae.k); // TopK: k features on every token (none exactly 0 here)

        SparseAutoencoder constant; // f = (1, 2) on every token: every example ties, and the earliest are kept
        constant.wEnc = Tensor({128, 2});
        constant.bEnc = Tensor({2});
        constant.bEnc.data()[0] = 1;
        constant.bEnc.data()[1] = 2;
        constant.wDec = Tensor({2, 128});
        constant.bDec = Tensor({128});
        o.top = 4;
        const FeatureCorpusStats ties = featureCorpusPass(model, constant, mid, tokens, o);
        QVERIFY((ties.topToken == std::vector<int64_t> {0, 1, 2, 3, 0, 1, 2, 3}));
        QVERIFY((ties.activeCount == std::vector<int64_t> {300, 300}));
        QCOMPARE(ties.histogram[size_t(FeatureCorpusStats::binOf(1.0f))], 300.0f);
        QCOMPARE(FeatureCorpusStats::binOf(1.0f), 32); // 10^0 is the lower edge of the 33rd bin, from 10^-4
        QCOMPARE(FeatureCorpusStats::binLow(32), 1.0);
    }

    void theCacheFileKeepsThePassAndRefusesAnotherKeyOrABrokenFile()
    {
        const FeatureCorpusStats s = smallPass();
        QTemporaryDir tmp;
        const std::string path = (tmp.path() + "/pass.safetensors").toStdString();
        writeFeatureCorpusFile(path, "key one", s);
        const std::optional<FeatureCorpusStats> back = readFeatureCorpusFile(path, "key one");
        QVERIFY(back && sameStats(*back, s));
        QVERIFY(!readFeatureCorpusFile(path, "key two"));
        QVERIFY(!readFeatureCorpusFile((tmp.path() + "/absent").toStdString(), "key one"));
        std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
        QVERIFY(!readFeatureCorpusFile(path, "key one"));
        QFile junk(tmp.path() + "/junk.safetensors");
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write("not a safetensors file at all");
        junk.close();
        QVERIFY(!readFeatureCorpusFile((tmp.path() + "/junk.safetensors").toStdString(), "key one"));

        // Its own format with an index that is not a whole number, or NaN: not converted, run again.
        for (const float bad : {0.5f, std::numeric_limits<float>::quiet_NaN(), 1e30f}) {
            writeFeatureCorpusFile(path, "key one", s);
            const SafetensorsFile file(path);
            std::map<std::string, Tensor> tensors;
            std::map<std::string, const Tensor *> pointers;
            for (const auto &[name, entry] : file.entries())
                pointers[name] = &(tensors[name] = file.tensor(name));
            tensors["top_token"].data()[1] = bad;
            writeSafetensors(path, pointers, file.metadata());
            QVERIFY(readFeatureCorpusFile(path, "key one") == std::nullopt);
        }
    }

    // The cache is kept to its limit by removing the passes used longest ago; the pass just written, files of
    // another name or format, and a link to a pass stay.
    void theCacheKeepsToItsLimitOldestFirstAndOnlyItsOwnFiles()
    {
        const FeatureCorpusStats s = smallPass();
        QTemporaryDir tmp;
        namespace fs = std::filesystem;
        const fs::path dir = tmp.path().toStdString();
        const auto pass
            = [&](int i) { return dir / (std::string("000000000000000") + char('a' + i) + ".safetensors"); };
        const auto now = fs::file_time_type::clock::now();
        for (int i = 0; i < 4; ++i) { // a used 4 hours ago … d 1 hour ago
            writeFeatureCorpusFile(pass(i).string(), "key", s);
            fs::last_write_time(pass(i), now - std::chrono::hours(4 - i));
        }
        const uint64_t one = fs::file_size(pass(0));
        QVERIFY(QFile::copy(QString::fromStdString(pass(0).string()), tmp.filePath("notes.safetensors")));
        QFile foreign(tmp.filePath("00000000000000ff.safetensors")); // our name, not our format
        QVERIFY(foreign.open(QIODevice::WriteOnly));
        foreign.write(QByteArray(int(one), 'x'));
        foreign.close();
        fs::create_symlink(pass(3), dir / "00000000000000ee.safetensors");
        fs::last_write_time(pass(0), now); // a read renewed a: b is now the oldest

        QCOMPARE(pruneFeatureCorpusCache(dir.string(), 4 * one, pass(3).string()), 0); // four passes fit
        QCOMPARE(pruneFeatureCorpusCache(dir.string(), 2 * one + one / 2, pass(1).string()), 2); // keep b
        QVERIFY(fs::exists(pass(0)) && fs::exists(pass(1)) && !fs::exists(pass(2)) && !fs::exists(pass(3)));
        QVERIFY(fs::exists(dir / "notes.safetensors") && foreign.exists());
        QVERIFY(fs::is_symlink(dir / "00000000000000ee.safetensors"));
        QCOMPARE(pruneFeatureCorpusCache(dir.string(), 0, pass(1).string()), 1); // a goes, b is kept
        QVERIFY(!fs::exists(pass(0)) && fs::exists(pass(1)));
        QCOMPARE(pruneFeatureCorpusCache((dir / "absent").string(), 0, ""), 0);
    }

    void aPassIsRunOnceThenKeptInMemoryAndOnDisk()
    {
        QTemporaryDir cache;
        qputenv("ATLAS_CACHE_DIR", cache.path().toUtf8());
        const auto model = loadModel("austen");
        const std::string path = dictionaryPath(*model, "blocks.2.hook_resid_post");
        FeatureCorpusSource source {model, path, std::make_shared<const SaeDirectory>(loadDictionary(path)),
            "built-in corpus", &corpusTraining(), {}};
        source.options.maxTokens = 200;
        const auto pass = [&] { return featureCorpus(source, {}, nullptr, WorkBudget::process()); };
        const FeatureCorpus first = pass();
        QCOMPARE(int(first.origin), int(FeatureCorpus::Origin::Computed));
        QVERIFY2(first.cacheProblem.empty(), first.cacheProblem.c_str());
        QVERIFY(QString::fromStdString(first.cachePath).startsWith(cache.path() + "/feature-dashboards/"));
        QVERIFY(std::filesystem::is_regular_file(first.cachePath));
        QCOMPARE(int(pass().origin), int(FeatureCorpus::Origin::Memory));
        source.options.maxTokens = 150; // another pass takes the memory's place
        QCOMPARE(int(pass().origin), int(FeatureCorpus::Origin::Computed));
        source.options.maxTokens = 200;
        const FeatureCorpus fromDisk = pass();
        QCOMPARE(int(fromDisk.origin), int(FeatureCorpus::Origin::Disk));
        QVERIFY(sameStats(*fromDisk.stats, *first.stats));
        source.options.maxTokens = 150;
        (void)pass();
        std::filesystem::resize_file(first.cachePath, 100); // broken: run again, and kept again
        source.options.maxTokens = 200;
        QCOMPARE(int(pass().origin), int(FeatureCorpus::Origin::Computed));
        QVERIFY(std::filesystem::file_size(first.cachePath) > 100);
        QCOMPARE(int(featureCorpus(source, {}, nullptr, WorkBudget::process(), false).origin),
            int(FeatureCorpus::Origin::Computed));
        qunsetenv("ATLAS_CACHE_DIR");
    }

    void aPassOverTheBudgetOrCancelledIsRefused()
    {
        const auto model = loadModel("austen");
        const SparseAutoencoder split = splitDictionary(128);
        const SaeSite site = saeSiteFromHook("blocks.0.hook_resid_post");
        const QString over = errorFrom([&] {
            (void)featureCorpusPass(
                model, split, site, corpusTokens(*model, 100), {}, {}, nullptr, WorkBudget {0, 1e5});
        });
        QVERIFY2(
            over.contains("the feature dashboard's pass over 100 tokens (256 features)") && over.contains("over the"),
            qPrintable(over));
        std::atomic<bool> cancel {true};
        QVERIFY(errorFrom([&] {
            (void)featureCorpusPass(model, split, site, corpusTokens(*model, 100), {}, {}, &cancel);
        }).contains("cancelled"));
        QVERIFY(errorFrom([&] {
            (void)featureCorpusPass(model, splitDictionary(64), site, corpusTokens(*model, 100), {});
        }).contains("W_enc is [64, 128], but blocks.0.hook_resid_post of austen has 128 dimensions"));
    }

    // The logit effects are the output head's derivative along the feature's direction d, times the final norm's σ,
    // at a stream x that d does not change the norm of: x orthogonal to d (and centred, for LayerNorm). The head is
    // the model's own, run after the last stream is replaced by x ± εd.
    void logitEffectsAreTheOutputHeadsDerivativeAlongTheDirection_data()
    {
        QTest::addColumn<QString>("model");
        QTest::newRow("austen (LayerNorm)") << "austen";
        QTest::newRow("llama (RMSNorm)") << dataPath("llama_tiny");
        QTest::newRow("gemma 3 (RMSNorm of 1 + γ)") << dataPath("gemma3_tiny");
    }
    void logitEffectsAreTheOutputHeadsDerivativeAlongTheDirection()
    {
        QFETCH(QString, model);
        const auto m = loadModel(model.toStdString());
        const int64_t D = m->config.dModel, V = m->config.vocab;
        const SparseAutoencoder sae = initialSparseAutoencoder(SaeArchitecture::Standard, D, 6, 0, 3);
        const int feature = 4;
        const LogitEffects effects = featureLogitEffects(*m, sae, feature, int(V));
        QCOMPARE(int64_t(effects.raised.size()), V);

        const SaeSite site {SaeSiteKind::ResidualPost, m->config.layers - 1};
        const std::string tensor = saeSiteTensor(*m, site);
        Input input;
        input.tokens = {3, 5};
        const bool layerNorm = m->config.norm == NormKind::LayerNorm;
        Eigen::VectorXd d = Eigen::Map<const Eigen::VectorXf>(sae.wDec.data() + feature * D, D).cast<double>();
        Eigen::VectorXd x
            = Eigen::Map<const Eigen::VectorXf>(runThroughSite(m, tensor, input)->trace().tensor(tensor).data() + D, D)
                  .cast<double>();
        if (layerNorm) {
            x.array() -= x.mean();
            d.array() -= d.mean();
        }
        x -= d * (x.dot(d) / d.squaredNorm());
        const double spread = x.squaredNorm() / double(D); // x is centred for LayerNorm: its variance
        const double sigma = std::sqrt(spread + double(m->config.lnEpsilon));
        const double epsilon = 1e-2 * x.norm() / d.norm();
        const auto logitsAt = [&](double sign) {
            std::unique_ptr<Engine> run = runThroughSite(m, tensor, input);
            changeSiteAndFinish(*run, tensor, [&](Tensor &rows) {
                const Eigen::VectorXd row = x
                    + sign * epsilon
                        * Eigen::Map<const Eigen::VectorXf>(sae.wDec.data() + feature * D, D).cast<double>();
                for (int64_t j = 0; j < D; ++j)
                    rows.data()[D + j] = float(row[j]);
            });
            const Tensor &z = run->trace().tensor("logits");
            return Eigen::Map<const Eigen::VectorXf>(z.data() + V, V).cast<double>().eval();
        };
        const Eigen::VectorXd derivative = (logitsAt(1) - logitsAt(-1)) * (sigma / (2 * epsilon));
        double largest = 0, worst = 0;
        for (const auto &[id, e] : effects.raised) {
            largest = std::max(largest, std::abs(double(e)));
            worst = std::max(worst, std::abs(double(e) - derivative[id]));
        }
        QVERIFY2(worst < 2e-3 * largest, qPrintable(QString("off by %1 of %2").arg(worst).arg(largest)));
        QVERIFY(std::is_sorted(effects.raised.begin(), effects.raised.end(),
            [](const auto &a, const auto &b) { return a.second > b.second; }));
        const LogitEffects few = featureLogitEffects(*m, sae, feature, 5);
        QCOMPARE(few.lowered.front(), effects.raised.back());
        QCOMPARE(few.raised.size(), size_t(5));
    }

    void nearestFeaturesAreTheLargestDecoderCosines()
    {
        const SparseAutoencoder sae = initialSparseAutoencoder(SaeArchitecture::TopK, 16, 40, 4, 9);
        const int feature = 7;
        const std::vector<std::pair<int, float>> nearest = nearestFeatures(sae, feature, 5);
        std::vector<std::pair<double, int>> cosines;
        const auto row
            = [&](int i) { return Eigen::Map<const Eigen::VectorXf>(sae.wDec.data() + i * 16, 16).cast<double>(); };
        for (int i = 0; i < 40; ++i)
            if (i != feature)
                cosines.emplace_back(row(i).dot(row(feature)) / (row(i).norm() * row(feature).norm()), i);
        std::sort(cosines.rbegin(), cosines.rend());
        QCOMPARE(nearest.size(), size_t(5));
        for (size_t i = 0; i < 5; ++i) {
            QCOMPARE(nearest[i].first, cosines[i].second);
            QVERIFY(std::abs(nearest[i].second - cosines[i].first) < 1e-5);
        }
        // ±e_i: a feature's opposite is at −1, every other at 0, ties to the lower index
        const std::vector<std::pair<int, float>> split = nearestFeatures(splitDictionary(4), 1, 7);
        QCOMPARE(split.front().first, 0);
        QCOMPARE(split.back().first, 5);
        QCOMPARE(split.back().second, -1.0f);
    }
};

QTEST_GUILESS_MAIN(TestFeatureDashboard)
#include "tst_featuredashboard.moc"
