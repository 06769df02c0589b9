// The research tools on the command line: dump --logit-lens writes the lens beside the trace, patch prints and
// writes an activation-patching sweep, evaluate scores questions longer than the training ones, generate stops at a
// full context, analyze-heads --classify scores every head's kind, dla splits a logit difference into its direct
// parts (summing to the model's own), train-sae and features fit and read a sparse autoencoder, and steer steers with
// one of its features; their misuse is refused before anything is written.
#include "clitesting.h"
#include "io/npy.h"
#include "tensortesting.h"
#include "testbundle.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

class TestResearchCli : public QObject
{
    Q_OBJECT

    using Result = atlas::testing::CliResult;
    static Result run(const QStringList &args) { return atlas::testing::runCli(args); }

private slots:
    // dump --logit-lens: the top tokens of every row, whose last row is the model's own prediction; --lens-full
    // writes every row's logits, the last equal to logits.npy; the lens options alone are refused.
    void dumpWritesTheLogitLens()
    {
        QTemporaryDir dir;
        const auto top = run({"dump", "--model", "reverse", "--text", "abcdef>", "--logit-lens", "--lens-top-k", "2",
            "--lens-full", "--out", dir.filePath("lens")});
        QVERIFY2(top.code == 0, qPrintable(top.err));
        QFile manifestFile(dir.filePath("lens/manifest.json"));
        QVERIFY(manifestFile.open(QIODevice::ReadOnly));
        const QJsonObject lens = QJsonDocument::fromJson(manifestFile.readAll()).object()["logit_lens"].toObject();
        QCOMPARE(lens["streams"].toArray().size(), 3); // the embedding and the stream after each of 2 blocks
        QCOMPARE(lens["streams"].toArray().last().toString(), QString("layer.1.out"));
        const atlas::Tensor ids = atlas::readNpy(dir.filePath("lens/lens.top_ids.npy").toStdString());
        QCOMPARE(ids.shape(), (atlas::Shape {3, 7, 2}));
        const atlas::Tensor logits = atlas::readNpy(dir.filePath("lens/logits.npy").toStdString());
        const atlas::Tensor last = atlas::readNpy(dir.filePath("lens/lens.2.logits.npy").toStdString());
        QCOMPARE(last.shape(), logits.shape());
        QVERIFY(std::equal(logits.data(), logits.data() + logits.numel(), last.data()));
        const int64_t V = logits.dim(1);
        for (int64_t t = 0; t < 7; ++t) { // the last row's top token: the argmax of the model's logits
            const float *z = logits.data() + t * V;
            QCOMPARE(int(ids.data()[(2 * 7 + t) * 2]), int(std::max_element(z, z + V) - z));
        }
        const auto refused
            = run({"dump", "--model", "reverse", "--text", "abc", "--lens-full", "--out", dir.filePath("refused")});
        QVERIFY(refused.code != 0 && refused.err.contains("--logit-lens"));
        QVERIFY(!QFile::exists(dir.filePath("refused")));
    }

    // dump --attention-trace checkpoints or inputs: the run keeps each block's checkpoints or its input only, and the
    // dump still writes every tensor and the heads asked, those it freed computed again (marked "recomputed"), each as
    // the run kept on demand writes it.
    void dumpWritesEveryTensorOfACheckpointedRun()
    {
        QTemporaryDir dir;
        const QStringList base
            = {"dump", "--model", ATLAS_TEST_DATA "/llama_tiny", "--tokens", "3,17,42,8,5,9,1", "--heads", "1.*"};
        auto r = run(base + QStringList {"--attention-trace", "on-demand", "--out", dir.filePath("lazy")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const auto manifest = [&](const QString &name) {
            QFile f(dir.filePath(name + "/manifest.json"));
            return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
        };
        const QJsonObject lazy = manifest("lazy");
        for (const QString keeping : {"checkpoints", "inputs"}) {
            r = run(base + QStringList {"--attention-trace", keeping, "--out", dir.filePath(keeping)});
            QVERIFY2(r.code == 0, qPrintable(r.err));
            const QJsonObject kept = manifest(keeping);
            QCOMPARE(kept["attention_trace"].toString(), keeping);
            QCOMPARE(kept["tensors"].toArray().size(), lazy["tensors"].toArray().size());
            int recomputed = 0, heads = 0;
            for (const QJsonValue &t : kept["tensors"].toArray()) {
                const QString name = t.toObject()["name"].toString();
                recomputed += t.toObject()["recomputed"].toBool();
                heads += name.startsWith("layer.1.attn.probs.head");
                const atlas::Tensor a = atlas::readNpy(dir.filePath("lazy/" + name + ".npy").toStdString()),
                                    b = atlas::readNpy(dir.filePath(keeping + "/" + name + ".npy").toStdString());
                QVERIFY2(a.shape() == b.shape(), qPrintable(name));
                for (int64_t i = 0; i < a.numel(); ++i)
                    QVERIFY2(std::abs(a.data()[i] - b.data()[i]) <= 1e-6f * (1 + std::abs(a.data()[i])),
                        qPrintable(keeping + " " + name));
            }
            QVERIFY(recomputed > 0 && heads > 0);
        }
        r = run(base + QStringList {"--attention-trace", "checkpoint", "--out", dir.filePath("bad")});
        QVERIFY(r.code != 0 && r.err.contains("is not auto, whole, on-demand, checkpoints or inputs"));
    }

    // patch: copy's induction traced through the residual stream, the grid printed and written as JSON; inputs of
    // different lengths and a second corruption refused.
    // dump --early-exit writes both rules' sweeps; evaluate --layer-sweep prints both pruning rules at every depth.
    void earlyExitAndLayerSweep()
    {
        QTemporaryDir dir;
        const auto dumped = run({"dump", "--model", "austen", "--text", "She was not in the habit of", "--early-exit",
            "--out", dir.filePath("exit")});
        QVERIFY2(dumped.code == 0, qPrintable(dumped.err));
        QVERIFY(dumped.out.contains("early exit's sweeps"));
        QFile manifest(dir.filePath("exit/manifest.json"));
        QVERIFY(manifest.open(QIODevice::ReadOnly));
        const QJsonObject exit = QJsonDocument::fromJson(manifest.readAll()).object().value("early_exit").toObject();
        QCOMPARE(exit.value("blocks").toInt(), 4);
        QCOMPARE(exit.value("confidence").toArray().size(), 20);
        QCOMPARE(exit.value("patience").toArray().size(), 3);
        QVERIFY(std::abs(exit.value("full_accuracy").toDouble() - 22.0 / 26.0) < 1e-9); // 22 of 26 next characters

        const auto sweep = run({"evaluate", "--model", "reverse", "--layer-sweep", "--examples", "16"});
        QVERIFY2(sweep.code == 0, qPrintable(sweep.err));
        QVERIFY2(sweep.out.contains("first k kept") && sweep.out.contains("(drops 0)"), qPrintable(sweep.out));
        const auto both = run({"evaluate", "--model", "reverse", "--layer-sweep", "--drop-layers", "1"});
        QVERIFY(both.code != 0 && both.err.contains("--layer-sweep prunes blocks at every depth"));
        const auto bad = run({"evaluate", "--model", "reverse", "--task", "reverse", "--drop-layers", "2"});
        QVERIFY(bad.code != 0 && bad.err.contains("--drop-layers: layer 2 is not one of the model's 2 layers"));
    }

    // evaluate --by-position: a retrieval model asked for each pair in turn, one row per position; other models and
    // other options refused by name.
    void evaluateByPosition()
    {
        QTemporaryDir dir;
        const QString model = dir.filePath("kv");
        const auto trained = run(
            {"train", "--task", "retrieval", "--out", model, "--steps", "1", "--batch", "1", "--eval-examples", "1"});
        QVERIFY2(trained.code == 0, qPrintable(trained.err));
        const auto r = run({"evaluate", "--model", model, "--by-position", "--examples", "2"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("by its position among 10 pairs") && r.out.contains("first pair"), qPrintable(r.out));
        QCOMPARE(r.out.count(QRegularExpression("^ +[0-9] +[0-9.]+% ", QRegularExpression::MultilineOption)), 10);
        const auto withTask = run({"evaluate", "--model", model, "--by-position", "--task", "retrieval"});
        QVERIFY(withTask.code != 0 && withTask.err.contains("--by-position asks a retrieval model"));
        const auto other = run({"evaluate", "--model", "reverse", "--by-position"});
        QVERIFY(other.code != 0 && other.err.contains("not trained on key–value retrieval"));
    }

    void evaluateScoresLongerQuestions()
    {
        auto r = run(
            {"evaluate", "--model", "reverse-alibi", "--task", "reverse", "--length-scale", "2", "--examples", "16"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(
            r.out.contains("reverse-alibi on reverse at 2x the training length: held-out loss"), qPrintable(r.out));
        r = run({"evaluate", "--model", "reverse", "--task", "reverse", "--length-scale", "4", "--examples", "16"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("do not fit the model's 32 learned positions"), qPrintable(r.err));
        r = run({"evaluate", "--model", "copy", "--task", "copy", "--length-scale", "2"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("task copy has one length only"), qPrintable(r.err));
    }

    void generateStopsWhenTheContextIsFull()
    {
        const auto r = run({"generate", "--model", "austen", "--text", "It is a truth", "--steps", "200"});
        QCOMPARE(r.code, 0);
        QVERIFY2(
            r.out.contains("stopped after 115 tokens: the model's context of 128 tokens is full"), qPrintable(r.out));
        QVERIFY(r.out.contains("\nIt is a truth"));
    }

    void patchTracesTheLetter()
    {
        QTemporaryDir dir;
        const auto traced = run({"patch", "--model", "copy", "--text", "qzkxwmbt|qzkx", "--corrupted-text",
            "qzkxambt|qzkx", "--target", "w", "--contrast", "a", "--json", dir.filePath("p.json")});
        QVERIFY2(traced.code == 0, qPrintable(traced.err));
        QVERIFY(traced.out.contains("26 patched forward passes"));
        QFile f(dir.filePath("p.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject j = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(j["rows"].toInt(), 2);
        QCOMPARE(j["cols"].toInt(), 13);
        QCOMPARE(j["recovered"].toArray().at(4).toDouble(), 1.0); // the changed letter, entering block 0
        QVERIFY(j["recovered"].toArray().at(13 + 12).toDouble() > 0.99); // the last position, entering block 1
        // --json /dev/stdout into a pipe (the test's): /proc/self/fd/1 links to "pipe:[…]", written as it is.
        const auto piped = run({"patch", "--model", "copy", "--text", "qzkxwmbt|qzkx", "--corrupted-text",
            "qzkxambt|qzkx", "--target", "w", "--contrast", "a", "--json", "/dev/stdout"});
        QVERIFY2(piped.code == 0 && piped.out.contains("\"recovered\""), qPrintable(piped.err));
        const auto shorter
            = run({"patch", "--model", "copy", "--text", "qzkxwmbt|qzkx", "--corrupted-text", "qzk", "--target", "w"});
        QVERIFY(shorter.code != 0 && shorter.err.contains("equal length"));
        const auto both = run({"patch", "--model", "copy", "--text", "abc", "--corrupted-text", "abd",
            "--noise-positions", "1", "--target", "w"});
        QVERIFY(both.code != 0 && both.err.contains("give one corruption"));
    }

    // dla: the printed grid and the JSON hold the same parts, which sum to the model's own logit difference; a model
    // without direct parts is refused with the reason, and no JSON is written.
    // `circuit` on copy's induction: every edge estimated and patched, the largest leaving head 3 of layer 0, the JSON
    // with every edge and the curve; `path-patch` through the feed-forwards, and a path that runs backwards refused.
    void circuitAndPathPatchingFindCopysInduction()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath("circuit.json");
        const QStringList input = {"--model", "copy", "--text", "hfjdlwqp|hfjd", "--corrupted-text", "hfjdowqp|hfjd",
            "--target", "l", "--contrast", "o"};
        const auto r = run(QStringList {"circuit"} + input + QStringList {"--exact", "--top", "3", "--json", json});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("11 senders, 27 receivers, 110 edges"), qPrintable(r.out));
        const QRegularExpressionMatch rank = QRegularExpression("rank correlation [^:]*: ([0-9.]+)").match(r.out);
        QVERIFY2(rank.hasMatch() && rank.captured(1).toDouble() >= 0.8, qPrintable(r.out));
        QVERIFY2(r.out.contains("    1  a0.3 → "), qPrintable(r.out));
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(o["edges"].toArray().size(), 110);
        QVERIFY(o["edges"].toArray()[0].toObject().contains("exact"));
        const QJsonArray curve = o["faithfulness"].toArray();
        QCOMPARE(curve.first().toObject()["recovered"].toDouble(), 0.0);
        QVERIFY(std::abs(curve.last().toObject()["recovered"].toDouble() - 1) < 1e-4);

        const auto path
            = run(QStringList {"path-patch"} + input + QStringList {"--sender", "a0.3", "--receiver", "m0"});
        QVERIFY2(path.code == 0, qPrintable(path.err));
        QVERIFY2(path.out.contains("recovered 0.98"), qPrintable(path.out));
        const auto backwards
            = run(QStringList {"path-patch"} + input + QStringList {"--sender", "a1.3", "--receiver", "a0.2.q"});
        QCOMPARE(backwards.code, 1);
        QVERIFY2(backwards.err.contains("reads the stream before a1.3 writes"), qPrintable(backwards.err));
    }

    // train-sae fits a dictionary and saves it as SAELens does; features reads it back, and a Gemma Scope archive
    // with the site it reads.
    void trainSaeAndListFeatures()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("sae");
        const auto trained = run({"train-sae", "--model", "austen", "--site", "blocks.1.hook_resid_post", "--width",
            "64", "--k", "4", "--steps", "60", "--rows", "2000", "--auxk", "1", "--dead-after", "5", "--out", out});
        QVERIFY2(trained.code == 0, qPrintable(trained.err));
        QVERIFY2(trained.out.contains("of the loss recovered"), qPrintable(trained.out));
        QVERIFY2(trained.out.contains(QRegularExpression("step +60 .* AuxK [0-9.e-]+ .* \\d+ dead\n")),
            qPrintable(trained.out));
        QVERIFY(QFile::exists(out + "/cfg.json") && QFile::exists(out + "/sae_weights.safetensors"));
        QFile cfg(out + "/cfg.json");
        QVERIFY(cfg.open(QIODevice::ReadOnly));
        const QJsonObject training = QJsonDocument::fromJson(cfg.readAll()).object()["atlas_training"].toObject();
        QCOMPARE(training["auxk_coefficient"].toDouble(), 1.0);
        QCOMPARE(training["dead_after_steps"].toInt(), 5);
        const auto finished = run({"train-sae", "--model", "austen", "--site", "blocks.1.hook_resid_post", "--width",
            "64", "--k", "4", "--steps", "60", "--rows", "2000", "--resume", "--out", out});
        QVERIFY2(
            finished.code != 0 && finished.err.contains("holds no unfinished run to resume"), qPrintable(finished.err));
        const auto listed = run({"features", "--model", "austen", "--sae", out, "--text", "It is", "--top", "2"});
        QVERIFY2(listed.code == 0, qPrintable(listed.err));
        QVERIFY2(listed.out.contains("topk, 64 features over blocks.1.hook_resid_post"), qPrintable(listed.out));
        QCOMPARE(listed.out.count(QRegularExpression("L0    4:  #\\d+ [0-9.]+  #\\d+ [0-9.]+\n")), 5);
        const auto one = run({"features", "--model", "austen", "--sae", out, "--text", "It is", "--feature", "3"});
        QVERIFY2(one.code == 0 && one.out.contains("feature 3 on every token"), qPrintable(one.err));
        const QString page = dir.filePath("page.json");
        const auto dashboard = run({"feature-dashboard", "--model", "austen", "--sae", out, "--feature", "3",
            "--tokens", "600", "--top", "5", "--json", page});
        QVERIFY2(dashboard.code == 0, qPrintable(dashboard.err));
        QVERIFY2(dashboard.out.contains("600 tokens, 64 features, the pass run now"), qPrintable(dashboard.out));
        QFile pageFile(page);
        QVERIFY(pageFile.open(QIODevice::ReadOnly));
        const QJsonObject p = QJsonDocument::fromJson(pageFile.readAll()).object();
        QCOMPARE(p["tokens"].toInt(), 600);
        const QJsonArray examples = p["examples"].toArray();
        QVERIFY(!examples.isEmpty() && examples.size() <= 5);
        for (int i = 1; i < examples.size(); ++i)
            QVERIFY(
                examples[i - 1].toObject()["activation"].toDouble() >= examples[i].toObject()["activation"].toDouble());
        QVERIFY(examples[0].toObject()["context"].toString().contains("[["));
        QCOMPARE(p["raises"].toArray().size(), 10);
        QCOMPARE(p["nearest"].toArray().size(), 8);
        const auto again = run({"feature-dashboard", "--model", "austen", "--sae", out, "--feature", "4", "--tokens",
            "600", "--top", "5"});
        QVERIFY2(again.out.contains("the pass read from the cache"), qPrintable(again.out)); // another process

        const QString npz = atlas::testing::dataPath("sae/gemma_scope/params.npz");
        const auto noSite = run({"features", "--model", "austen", "--sae", npz, "--text", "It"});
        QCOMPARE(noSite.code, 1);
        QVERIFY2(noSite.err.contains("does not say where it reads"), qPrintable(noSite.err));
        const auto wrongWidth = run(
            {"features", "--model", "austen", "--sae", npz, "--site", "blocks.0.hook_resid_post", "--text", "It"});
        QCOMPARE(wrongWidth.code, 1);
        QVERIFY2(wrongWidth.err.contains("W_enc is [6, 10], but blocks.0.hook_resid_post of austen has 128"),
            qPrintable(wrongWidth.err));
        const auto steered = run({"steer", "--model", "austen", "--text", "She spoke", "--sae",
            "blocks.2.hook_resid_post", "--feature", "187", "--strength", "8", "--new-tokens", "20"});
        QVERIFY2(steered.code == 0, qPrintable(steered.err));
        const QStringList lines = steered.out.split('\n');
        QVERIFY2(lines.size() >= 3 && lines[1].startsWith("  unsteered: She spoke|")
                && lines[2].startsWith("  steered:   She spoke|") && lines[1].mid(13) != lines[2].mid(13),
            qPrintable(steered.out));
        // Sampled, both continuations draw from one seed: at strength 0 they are the same text.
        const auto sampled = run({"steer", "--model", "austen", "--text", "She spoke", "--sae",
            "blocks.2.hook_resid_post", "--feature", "187", "--strength", "0", "--new-tokens", "20", "--temperature",
            "0.9", "--top-p", "0.95", "--seed", "3"});
        QVERIFY2(sampled.code == 0, qPrintable(sampled.err));
        const QStringList both = sampled.out.split('\n');
        QVERIFY2(both.size() >= 4 && both[1] == "both sampled at temperature 0.9 (top-k 0, top-p 0.95) from seed 3"
                && both[2].startsWith("  unsteered: She spoke|") && both[2].mid(13) == both[3].mid(13),
            qPrintable(sampled.out));
        const auto neither = run({"steer", "--model", "austen", "--text", "She"});
        QCOMPARE(neither.code, 1);
        QVERIFY2(neither.err.contains("one of the two"), qPrintable(neither.err));
        const auto badSite = run({"train-sae", "--model", "austen", "--site", "blocks.9.hook_mlp_out", "--out", out});
        QCOMPARE(badSite.code, 1);
        QVERIFY2(badSite.err.contains("blocks 0 … 3"), qPrintable(badSite.err));

        // A transcoder (JumpReLU by default): trained, read back by features, steered where it writes.
        const QString transcoder = dir.filePath("transcoder");
        const auto trainedTranscoder
            = run({"train-sae", "--model", "austen", "--site", "blocks.1.ln2.hook_normalized", "--writes",
                "blocks.1.hook_mlp_out", "--width", "64", "--steps", "20", "--rows", "500", "--out", transcoder});
        QVERIFY2(trainedTranscoder.code == 0, qPrintable(trainedTranscoder.err));
        QVERIFY2(trainedTranscoder.out.contains("blocks.1.ln2.hook_normalized \u2192 blocks.1.hook_mlp_out of austen")
                && trainedTranscoder.out.contains("trained jumprelu transcoder, 64 features"),
            qPrintable(trainedTranscoder.out));
        const auto read = run({"features", "--model", "austen", "--text", "She", "--sae", transcoder});
        QVERIFY2(read.code == 0, qPrintable(read.err));
        QVERIFY2(read.out.contains("jumprelu transcoder, 64 features over blocks.1.ln2.hook_normalized \u2192 "
                                   "blocks.1.hook_mlp_out"),
            qPrintable(read.out));
        const auto steer = run({"steer", "--model", "austen", "--text", "She", "--sae", transcoder, "--feature", "3"});
        QVERIFY2(steer.code == 0 && steer.out.contains("at blocks.1.hook_mlp_out"), qPrintable(steer.out + steer.err));
        const auto clamp = run(
            {"steer", "--model", "austen", "--text", "She", "--sae", transcoder, "--feature", "3", "--clamp", "1"});
        QCOMPARE(clamp.code, 1);
        QVERIFY2(clamp.err.contains("not clamped"), qPrintable(clamp.err));
    }

    void dlaSplitsALogitDifference()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath("dla.json");
        const auto r = run({"dla", "--model", "austen", "--text", "It is a truth universally acknowledged", "--target",
            "e", "--against", "a", "--top", "3", "--json", json});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("logit('e') - logit('a')"));
        QVERIFY(r.out.contains("largest writers:"));
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        double sum = o["embedding"].toDouble() + o["norm_shift"].toDouble();
        const QJsonArray heads = o["heads"].toArray();
        QCOMPARE(heads.size(), 4); // austen's four layers
        for (int l = 0; l < heads.size(); ++l) {
            for (const QJsonValue &h : heads[l].toArray())
                sum += h.toDouble();
            sum += o["bias"].toArray()[l].toDouble() + o["ffn"].toArray()[l].toDouble();
        }
        QVERIFY(std::abs(sum - o["logit"].toDouble()) < 1e-4);
        QVERIFY(std::abs(o["sum"].toDouble() - o["logit"].toDouble()) < 1e-4);
        // The top writer printed is the largest part of the JSON.
        const QRegularExpressionMatch first
            = QRegularExpression("largest writers:\\n  (\\S+ ?\\S*)\\s+([+-][0-9.]+)").match(r.out);
        QVERIFY2(first.hasMatch(), qPrintable(r.out));

        const QString refused = dir.filePath("refused.json");
        const auto bert = run({"dla", "--model", "austen-bert", "--text", "It is a [MASK]", "--json", refused});
        QCOMPARE(bert.code, 1);
        QVERIFY2(bert.err.contains("masked-LM head"), qPrintable(bert.err));
        QVERIFY(!QFile::exists(refused));
    }

    // analyze-heads --classify: every kind's table for every head, the same numbers in the JSON with each definition;
    // its options alone, or mixed with a task's, are refused.
    void analyzeHeadsClassifies()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath("classes.json");
        const auto r
            = run({"analyze-heads", "--model", "copy", "--classify", "--half", "8", "--seed", "3", "--json", json});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.startsWith("on 8 random tokens, then the same 8 again"));
        QVERIFY(r.out.contains("induction: on the repeated sequence"));
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(o["tokens"].toArray().size(), 16);
        const QJsonObject scores = o["scores"].toObject();
        QCOMPARE(scores.size(), 7);
        for (const QString &kind : scores.keys()) {
            QCOMPARE(scores[kind].toArray().size(), 2); // copy's two layers of four heads
            QCOMPARE(scores[kind].toArray()[0].toArray().size(), 4);
            QVERIFY(!o["definitions"].toObject()[kind].toString().isEmpty());
        }
        const auto text = run({"analyze-heads", "--model", "copy", "--classify", "--text", "qzkxwmbt"});
        QVERIFY2(text.code == 0 && text.out.startsWith("on 8 tokens of the text"), qPrintable(text.err));
        QVERIFY(run({"analyze-heads", "--model", "copy", "--classify", "--task", "copy"}).err.contains("no --task"));
        QVERIFY(run({"analyze-heads", "--model", "copy", "--task", "copy", "--half", "8"})
                    .err.contains("--half goes with --classify"));
        QVERIFY(run({"analyze-heads", "--model", "copy", "--classify", "--text", "ab", "--seed", "2"})
                    .err.contains("--text gives the sequence's first half"));
    }
};

QTEST_GUILESS_MAIN(TestResearchCli)
#include "tst_researchcli.moc"
