// The command line against a hostile user (issue 13): bad numbers, huge sizes, unreadable files and kill -9 during
// writes. Every failure exits non-zero with the file or option named; a dump or a checkpoint is never left mixed.
#include "clitesting.h"
#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/stageddirectory.h"
#include "testbundle.h"
#include "train/trainer.h"
#include "util/error.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <set>

#include <signal.h>

class TestHostileCli : public QObject
{
    Q_OBJECT

    using Result = atlas::testing::CliResult;
    static Result run(const QStringList &args) { return atlas::testing::runCli(args); }

    static void write(const QString &path, const QByteArray &bytes)
    {
        QDir().mkpath(QFileInfo(path).path());
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    }

    // Starts `args`, kills it with SIGKILL after `ms` milliseconds (if it is still running).
    static void killAfter(const QStringList &args, int ms)
    {
        QProcess p;
        p.start(ATLAS_BINARY, args);
        QVERIFY(p.waitForStarted());
        if (!p.waitForFinished(ms)) {
            ::kill(pid_t(p.processId()), SIGKILL);
            p.waitForFinished();
        }
    }

    static std::set<std::string> filesIn(const std::string &dir)
    {
        std::set<std::string> names;
        for (const auto &e : std::filesystem::directory_iterator(dir))
            names.insert(e.path().filename().string());
        return names;
    }

private slots:
    void refusedWithTheFieldNamed_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("reason");
        const QString tiny = ATLAS_TEST_DATA "/gpt2_tiny";
        const QStringList dump = {"dump", "--model", tiny, "--tokens", "1,2", "--out", "@DIR@/out"};
        QTest::newRow("spec number too large for a double")
            << QStringList {"render", "--spec", "@DIR@/huge.json", "--out", "@DIR@/x.png"} << "(at key 'layer')";
        QTest::newRow("spec read from /dev/zero") << QStringList {"render", "--spec", "/dev/zero", "--out",
            "@DIR@/x.png"} << "/dev/zero: is a character device";
        QTest::newRow("render layer out of range") << QStringList {"render", "--spec", "@DIR@/layer9.json", "--out",
            "@DIR@/x.png"} << "layer9.json: key 'layer': layer 9 does not exist";
        QTest::newRow("render head out of range") << QStringList {"render", "--spec", "@DIR@/head9.json", "--out",
            "@DIR@/x.svg"} << "head9.json: key 'head': head 9 does not exist";
        QTest::newRow("render missing tensor") << QStringList {"render", "--spec", "@DIR@/tensor.json", "--out",
            "@DIR@/x.png"} << "tensor.json: key 'tensor'";
        QTest::newRow("render size too large")
            << QStringList {"render", "--spec", "@DIR@/ok.json", "--out", "@DIR@/x.svg", "--size", "99999x99999"}
            << "--size: 99999x99999 is out of range";
        QTest::newRow("render size 30000") << QStringList {"render", "--spec", "@DIR@/ok.json", "--out", "@DIR@/x.png",
            "--size", "30000x30000"} << "is out of range";
        QTest::newRow("memory budget nan") << (QStringList(dump) << "--memory-budget"
                                                                 << "nan")
                                           << "is not a number";
        QTest::newRow("memory budget 1e30") << (QStringList(dump) << "--memory-budget"
                                                                  << "1e30")
                                            << "out of range";
        QTest::newRow("config n_embd wraps") << QStringList {"dump", "--model", "@DIR@/wide", "--tokens", "1", "--out",
            "@DIR@/out"} << "wide/config.json: key 'n_embd' is out of range: 4294967328";
        QTest::newRow("config too large for a double") << QStringList {"dump", "--model", "@DIR@/overflow", "--tokens",
            "1", "--out", "@DIR@/out"} << "overflow/config.json: not valid JSON";
        QTest::newRow("generate prompt longer than the context") << QStringList {"generate", "--model", tiny,
            "--tokens", QString("1,").repeated(19) + "1"} << "the prompt has 20 tokens";
        QTest::newRow("train into a read-only place") << QStringList {"train", "--task", "reverse", "--out",
            "/proc/atlas-cannot-write"} << "/proc/atlas-cannot-write";
        QTest::newRow("train save every 0") << QStringList {"train", "--task", "reverse", "--out", "@DIR@/t",
            "--save-every", "0"} << "--save-every: 0 is out of range (allowed: 1 to";
        QTest::newRow("train lr nan") << QStringList {"train", "--task", "reverse", "--out", "@DIR@/t", "--lr", "nan"}
                                      << "--lr";
        QTest::newRow("dump over a directory of other files") << QStringList {"dump", "--model", tiny, "--tokens", "1",
            "--out", "@DIR@"} << "holds files that transformer-atlas did not write";
        // Round two (issue 27): sizes far over the machine refused with the figure, before any allocation.
        QTest::newRow("train over a downloaded model") << QStringList {"train", "--task", "reverse", "--out",
            "@DIR@/wide", "--steps", "1"} << "wide: holds config.json but no training run's state";
        QTest::newRow("resume with --steps")
            << QStringList {"train", "--out", "@DIR@/t", "--resume", "--steps", "5"} << "--steps is the run's own";
        QTest::newRow("resume with --task")
            << QStringList {"train", "--out", "@DIR@/t", "--resume", "--task", "copy"} << "--task is the run's own";
        QTest::newRow("train d-model 16384")
            << QStringList {"train", "--task", "reverse", "--out", "@DIR@/t", "--d-model", "16384"} << "needs about";
        QTest::newRow("train experts 100000") << QStringList {"train", "--task", "reverse", "--out", "@DIR@/t",
            "--experts", "100000"} << "--experts: 100000 is out of range";
        QTest::newRow("train experts -3") << QStringList {"train", "--task", "reverse", "--out", "@DIR@/t", "--experts",
            "-3"} << "--experts: -3 is out of range";
        QTest::newRow("fine-tune into the start model") << QStringList {"train", "--task", "typos", "--from",
            "austen-mlm", "--out", ATLAS_SOURCE_DIR "/resources/models/austen-mlm", "--steps", "1"}
                                                        << "is the model --from starts from: the run would replace it";
        QTest::newRow("fine-tune a causal model on an encoder's task")
            << QStringList {"train", "--task", "typos", "--from", "austen", "--out", "@DIR@/t"}
            << "from austen: task typos reads the text both ways, and the model is causal";
        QTest::newRow("fine-tune with a shape") << QStringList {"train", "--task", "typos", "--from", "austen-mlm",
            "--out", "@DIR@/t", "--heads", "2"} << "the model fixes the shape and layout; leave heads out";
        QTest::newRow("train an encoder's layout on a causal task") << QStringList {"train", "--task", "reverse",
            "--out", "@DIR@/t", "--family", "bert"} << "family bert: BERT's layout is a bidirectional encoder";
        QTest::newRow("new-model t5 with K/V heads")
            << QStringList {"new-model", "--family", "t5", "--kv-heads", "2", "--out", "@DIR@/m"}
            << "option --kv-heads: the t5 family has no such setting (it is gemma2, gemma3_text, gpt_oss, llama, "
               "mistral, mixtral, olmo2, phi3, qwen2, qwen3, qwen3_moe, smollm3's)";
        QTest::newRow("new-model qwen3 with --nope-every")
            << QStringList {"new-model", "--family", "qwen3", "--nope-every", "2", "--out", "@DIR@/m"}
            << "option --nope-every: the qwen3 family has no such setting (it "
               "is smollm3's)";
        QTest::newRow("new-model gpt_neox with K/V heads") << QStringList {"new-model", "--family", "gpt_neox",
            "--kv-heads", "2", "--out", "@DIR@/m"} << "option --kv-heads: the gpt_neox family has no such setting";
        QTest::newRow("new-model gpt2 with --kv-heads nan") << QStringList {"new-model", "--kv-heads", "nan", "--out",
            "@DIR@/m"} << "option --kv-heads: the gpt2 family has no such setting";
        QTest::newRow("new-model gpt2 with --rope-theta -1") << QStringList {"new-model", "--rope-theta", "-1", "--out",
            "@DIR@/m"} << "option --rope-theta: the gpt2 family";
        QTest::newRow("new-model gpt2 with --window 5abc")
            << QStringList {"new-model", "--window", "5abc", "--out", "@DIR@/m"}
            << "option --window: the gpt2 family has no such setting (it is gemma2, gemma3_text, gpt_neo, gpt_oss, "
               "mixtral, phi3, smollm3's)";
        QTest::newRow("new-model of 3.3 TB") << QStringList {"new-model", "--layers", "256", "--d-model", "16384",
            "--out", "@DIR@/m"} << "parameters, held as float32, needs about";
        QTest::newRow("patch over the work budget") << QStringList {"patch", "--shape", "gpt2-small", "--tokens",
            QString("1,").repeated(63) + "1", "--noise-positions", "3", "--target",
            "#5"} << "Patching 64 tokens (768 forward passes, site residual) is about";
        QTest::newRow("render over a lowered work budget")
            << QStringList {"render", "--spec", "@DIR@/rollout.json", "--out", "@DIR@/x.png", "--work-budget", "1e-15"}
            << "Rollout over 2 layers of 3 tokens is about";
        QTest::newRow("work budget 0") << QStringList {"render", "--spec", "@DIR@/rollout.json", "--out", "@DIR@/x.png",
            "--work-budget", "0"} << "option --work-budget must be positive";
        QTest::newRow("memory shape too wide")
            << QStringList {"memory", "--shape", "4x4x16384", "--length", "128"} << "needs about";
        QTest::newRow("memory length 1048576")
            << QStringList {"memory", "--shape", "2x4x64", "--length", "1048576"} << "needs about";
        QTest::newRow("bench-pattern cells 1000000") << QStringList {"bench-pattern", "--kernel", "bigbird", "--cells",
            "1000000"} << "--cells: 1000000 is out of range";
        // Numbers that did nothing, or something else, with exit 0.
        QTest::newRow("analyze-heads examples 0") << QStringList {"analyze-heads", "--model", "reverse", "--task",
            "reverse", "--examples", "0"} << "--examples: 0 is out of range";
        QTest::newRow("analyze-heads examples -5") << QStringList {"analyze-heads", "--model", "reverse", "--task",
            "reverse", "--examples", "-5"} << "--examples: -5 is out of range";
        QTest::newRow("analyze-heads examples 2e9") << QStringList {"analyze-heads", "--model", "reverse", "--task",
            "reverse", "--examples", "2000000000"} << "--examples: 2000000000 is out of range";
        QTest::newRow("generate steps -5")
            << QStringList {"generate", "--model", "reverse", "--text", "abc>", "--steps", "-5"} << "--steps";
        QTest::newRow("tokens with an empty item")
            << QStringList {"dump", "--model", tiny, "--tokens", "1,,2", "--out", "@DIR@/out"} << "an empty item";
        QTest::newRow("bench-view length -1")
            << QStringList {"bench-view", "--length", "-1"} << "--length: -1 is out of range";
        QTest::newRow("bench-view repeat 0")
            << QStringList {"bench-view", "--length", "8", "--repeat", "0"} << "--repeat: 0 is out of range";
        QTest::newRow("render neuron key past the input") << QStringList {"render", "--spec", "@DIR@/neuron.json",
            "--out", "@DIR@/x.png"} << "neuron.json: key 'key': key 7 is outside the 2 tokens";
        QTest::newRow("special token inside the bytes") << QStringList {"dump", "--model", "@DIR@/special", "--text",
            "abc", "--out", "@DIR@/out"} << "'[MASK]' has id 97, which is a byte's";
        QTest::newRow("special token id 2^63") << QStringList {"dump", "--model", "@DIR@/special63", "--text", "abc",
            "--out", "@DIR@/out"} << "'[MASK]' has id 9223372036854775808";
        QTest::newRow("render of a model that is not there names the spec")
            << QStringList {"render", "--spec", "@DIR@/nomodel.json", "--out", "@DIR@/x.png"} << "nomodel.json: ";
        // Mistakes anyone makes: a typo, a token id too large, a list that is not one.
        QTest::newRow("token outside vocabulary") << QStringList {"dump", "--model", tiny, "--tokens", "1,50", "--out",
            "@DIR@/out"} << "outside the vocabulary";
        QTest::newRow("too long") << QStringList {"dump", "--model", tiny, "--tokens", QString("1,").repeated(17) + "1",
            "--out", "@DIR@/out"} << "longer than the model's context";
        QTest::newRow("missing model") << QStringList {"dump", "--model", "/no/such/dir", "--tokens", "1", "--out",
            "@DIR@/out"} << "/no/such/dir";
        QTest::newRow("bad token list") << QStringList {"dump", "--model", tiny, "--tokens", "1,x", "--out",
            "@DIR@/out"} << "'x' is not a token id";
        QTest::newRow("malformed safetensors") << QStringList {"dump", "--model", "@DIR@/broken", "--tokens", "1",
            "--out", "@DIR@/out"} << "model.safetensors";
        QTest::newRow("bad spec key") << QStringList {"render", "--spec", "@DIR@/bad.json", "--out", "@DIR@/x.png"}
                                      << "did you mean 'layer'";
        QTest::newRow("unknown option") << QStringList {"bench", "--lenght", "3"} << "unknown option --lenght";
        QTest::newRow("unknown command") << QStringList {"dumpp"} << "neither a command nor something the app opens";
        QTest::newRow("attention layer outside") << QStringList {"dump", "--model", tiny, "--tokens", "1,2",
            "--attention", "longformer", "--attention-layers", "5", "--out", "@DIR@/out"}
                                                 << "layer 5 is not in the model";
        QTest::newRow("attention layers alone")
            << QStringList {"dump", "--model", tiny, "--tokens", "1,2", "--attention-layers", "1", "--out", "@DIR@/out"}
            << "--attention-layers needs --attention KIND";
        QTest::newRow("reversible strategy, standard model") << QStringList {"memory", "--model", tiny, "--length", "4",
            "--strategy", "reversible"} << "--strategy reversible: this model has standard blocks";
        QTest::newRow("checkpoint interval too large") << QStringList {"memory", "--shape", "2x2x16", "--length", "8",
            "--strategy", "checkpoint", "--checkpoint-every", "3"}
                                                       << "--checkpoint-every 3: must be in 1..2";
        QTest::newRow("bad shape") << QStringList {"memory", "--shape", "2x3x16", "--length", "8"}
                                   << "d_model 16 is not a multiple of the 3 heads";
        QTest::newRow("train checkpoint interval alone") << QStringList {"train", "--task", "reverse", "--out",
            "@DIR@/out", "--checkpoint-every", "3"} << "use --save-every K";
        QTest::newRow("dump strategy without grads") << QStringList {"dump", "--model", tiny, "--tokens", "1,2",
            "--memory-strategy", "checkpoint", "--out", "@DIR@/out"}
                                                     << "--memory-strategy applies to the gradients";
        QTest::newRow("gguf truncated") << QStringList {"dump", "--model", "@DIR@/cut.gguf", "--tokens", "1", "--out",
            "@DIR@/out"}
                                        << "cut.gguf: tensor 3 'blk.0.attn_output.weight': its 4096 bytes at offset "
                                           "1184 lie outside the data section";
        QTest::newRow("gguf token past its vocabulary") << QStringList {"dump", "--model",
            ATLAS_TEST_DATA "/gguf/models/qwen2_tiny-f32.gguf", "--tokens", "64", "--out",
            "@DIR@/out"} << "token id 64 at position 0 is outside the vocabulary [0, 64)";
        QTest::newRow("text file not UTF-8") << QStringList {"dump", "--model", tiny, "--text-file", "@DIR@/latin1.txt",
            "--out", "@DIR@/out"} << "latin1.txt: not UTF-8 text: a malformed byte at offset 3 (line 1)";
        QTest::newRow("text file from /dev/zero") << QStringList {"dump", "--model", tiny, "--text-file", "/dev/zero",
            "--out", "@DIR@/out"} << "/dev/zero: is a character device";
        QTest::newRow("text file over 4 MiB") << QStringList {"dump", "--model", tiny, "--text-file", "@DIR@/large.txt",
            "--out", "@DIR@/out"} << "large.txt: file too large: more than 4194304 bytes";
        QTest::newRow("text file and text") << QStringList {"dump", "--model", tiny, "--text-file", "@DIR@/latin1.txt",
            "--text", "a", "--out", "@DIR@/out"}
                                            << "exactly one of --tokens 464,3290,318, --text";
        QTest::newRow("pattern of lsh") << QStringList {"bench-pattern", "--kernel", "lsh"} << "lsh";
        QTest::newRow("causal linformer")
            << QStringList {"bench-approximation", "--kernel", "linformer", "--causal"} << "causal";
    }

    void refusedWithTheFieldNamed()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        write(dir.filePath("huge.json"), R"({"view": "attention", "layer": 1e500})");
        write(dir.filePath("layer9.json"),
            R"({"model": ")" ATLAS_TEST_DATA R"(/gpt2_tiny", "tokens": [1, 2], "layer": 9})");
        write(dir.filePath("head9.json"),
            R"({"model": ")" ATLAS_TEST_DATA R"(/gpt2_tiny", "tokens": [1, 2], "head": 9})");
        write(dir.filePath("tensor.json"),
            R"({"model": ")" ATLAS_TEST_DATA R"(/gpt2_tiny", "tokens": [1, 2], "view": "tensor", "tensor": "nope"})");
        write(dir.filePath("ok.json"), R"({"model": ")" ATLAS_TEST_DATA R"(/gpt2_tiny", "tokens": [1, 2]})");
        write(dir.filePath("rollout.json"),
            R"({"model": ")" ATLAS_TEST_DATA R"(/gpt2_tiny", "tokens": [1, 2, 3], "view": "rollout"})");
        write(dir.filePath("neuron.json"),
            R"({"model": ")" ATLAS_TEST_DATA R"(/gpt2_tiny", "tokens": [1, 2], "view": "neuron", "key": 7})");
        write(dir.filePath("nomodel.json"), R"({"model": "/nonexistent/model", "tokens": [1, 2]})");
        write(dir.filePath("bad.json"), R"({"layr": 1})");
        write(dir.filePath("broken/model.safetensors"), QByteArray("\xff\xff\xff\xff\x00\x00\x00\x00{}", 10));
        QVERIFY(QFile::copy(ATLAS_TEST_DATA "/gpt2_tiny/config.json", dir.filePath("broken/config.json")));
        for (const auto &[name, id] : {std::pair {"special", "97"}, {"special63", "9223372036854775808"}}) {
            QVERIFY(QDir().mkpath(dir.filePath(name)));
            write(dir.filePath(name) + "/config.json",
                QByteArray(R"({"n_layer": 1, "n_head": 1, "n_embd": 8, "vocab_size": 300, "n_positions": 16,)")
                    + R"( "atlas_tokenizer": "bytes", "atlas_special_tokens": {"[MASK]": )" + id + "}}");
        }
        for (const char *name : {"wide", "overflow"}) {
            QVERIFY(QDir().mkpath(dir.filePath(name)));
            QVERIFY(
                QFile::copy(ATLAS_TEST_DATA "/gpt2_tiny/model.safetensors", dir.filePath(name) + "/model.safetensors"));
        }
        write(dir.filePath("wide/config.json"), R"({"n_embd": 4294967328})");
        write(dir.filePath("overflow/config.json"), R"({"n_layer": 2, "n_embd": 1e500})");
        QFile gguf(ATLAS_TEST_DATA "/gguf/models/qwen2_tiny-f32.gguf");
        QVERIFY(gguf.open(QIODevice::ReadOnly));
        write(dir.filePath("cut.gguf"), gguf.read(6000)); // the header whole, the data cut off
        write(dir.filePath("latin1.txt"), "caf\xe9\n");
        write(dir.filePath("large.txt"), QByteArray((4 << 20) + 1, 'a'));
        args.replaceInStrings("@DIR@", dir.path());
        QElapsedTimer timer;
        timer.start();
        const auto r = run(args);
        QVERIFY2(r.code > 0, qPrintable(QString::number(r.code) + " " + r.err));
        QVERIFY2(r.err.contains(reason), qPrintable(r.err));
        QVERIFY2(!r.err.contains("unexpected error"), qPrintable(r.err));
        QVERIFY2(timer.elapsed() < 30000, "refused only after doing the work");
        QVERIFY(!QFile::exists(dir.filePath("x.png")) && !QFile::exists(dir.filePath("x.svg")));
        QVERIFY2(!QFile::exists(dir.filePath("t")) && !QFile::exists(dir.filePath("m")),
            "a refused train or new-model left its --out directory behind");
    }

    // kill -9 at random moments of a dump over an earlier dump: the directory always holds one whole dump (the old
    // or the new one, every tensor the manifest lists and nothing else), and no temporary directory survives the
    // next dump.
    void killedDumpIsNeverMixed()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("dump");
        const QStringList first = {"dump", "--model", "austen", "--text", "It is a truth universally", "--out", out,
            "--targets", QString("1,").repeated(24) + "1", "--grads"};
        QCOMPARE(run(first).code, 0);
        const QStringList second = {"dump", "--model", "austen", "--text",
            "It is a truth universally acknowledged, that a single man", "--out", out};
        QRandomGenerator random(13);
        for (int i = 0; i < 8; ++i) {
            killAfter(second, 30 + int(random.bounded(400)));
            const std::string manifestPath = (out + "/manifest.json").toStdString();
            QVERIFY(std::filesystem::exists(manifestPath));
            const auto manifest = atlas::parseJson(atlas::readFile(manifestPath), manifestPath);
            std::set<std::string> listed = {"manifest.json", atlas::StagedDirectory::kMarker};
            for (const auto &t : manifest["tensors"])
                listed.insert(t["name"].get<std::string>() + ".npy");
            if (manifest.contains("gradients")) {
                listed.insert("loss.npy");
                for (const auto &g : manifest["gradients"])
                    listed.insert(g["name"].get<std::string>() + ".npy");
            }
            QVERIFY2(filesIn(out.toStdString()) == listed, "the dump directory holds files its manifest does not list");
        }
        QCOMPARE(run(second).code, 0);
        QVERIFY(!QFile::exists(out + "/loss.npy")); // nothing of the first dump is left
        for (const auto &name : filesIn(dir.path().toStdString()))
            QVERIFY2(name == "dump", name.c_str());
    }

    // kill -9 during `train --save-every 1`: every checkpoint left behind resumes, and the run continues.
    void killedTrainingAlwaysResumes()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("run");
        const QStringList train = {"train", "--task", "reverse", "--out", out, "--steps", "400", "--save-every", "1",
            "--eval-every", "1000", "--eval-examples", "4", "--batch", "2"};
        const QStringList resume
            = {"train", "--out", out, "--resume", "--save-every", "1", "--eval-every", "1000", "--eval-examples", "4"};
        QRandomGenerator random(7);
        int resumedFrom = -1;
        for (int i = 0; i < 10; ++i) {
            killAfter(QFile::exists(out + "/checkpoint.json") ? resume : train, 300 + int(random.bounded(900)));
            if (!QFile::exists(out + "/checkpoint.json"))
                continue;
            try {
                const int step = atlas::Trainer::resume(out.toStdString())->stepCount();
                QVERIFY(step >= resumedFrom);
                resumedFrom = step;
            } catch (const atlas::Error &e) {
                QFAIL(e.what());
            }
            // the current checkpoint, at most one being written and one not yet removed
            const std::set<std::string> sets = filesIn((out + "/checkpoints").toStdString());
            std::string names;
            for (const std::string &name : sets)
                names += name + " ";
            QVERIFY2(sets.size() <= 3, names.c_str());
        }
        QVERIFY2(resumedFrom > 0, "no checkpoint was written in 10 runs");
    }
};

QTEST_GUILESS_MAIN(TestHostileCli)
#include "tst_hostile_cli.moc"
