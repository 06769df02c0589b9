// Hostile files and outputs, round two (issue 27): JSON nested far too deep at every entry point, special files
// (FIFOs) where a file is expected, outputs that must never delete or replace what the program did not write, a
// full disk, and the messages each of these gives.
#include "attention/attentionsweep.h"
#include "clitesting.h"
#include "errortesting.h"
#include "io/atomicfile.h"
#include "io/jsonread.h"
#include "io/safetensors.h"
#include "io/stageddirectory.h"
#include "lesson/lesson.h"
#include "model/modelconfig.h"
#include "model/modeltokenizer.h"
#include "testbundle.h"
#include "tokenize/tokenizer.h"
#include "train/checkpointdirectory.h"
#include "train/trainer.h"
#include "util/error.h"
#include "view/viewspec.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <functional>
#include <thread>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace atlas;
using atlas::testing::errorFrom;

namespace {

using Result = atlas::testing::CliResult;
Result runProgram(const QStringList &args)
{
    return atlas::testing::runCli(args);
}

void write(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(bytes), bytes.size());
}

QByteArray read(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// 100000 arrays inside each other: 200 KB, well under every file's size limit.
std::string deepArray()
{
    return std::string(100000, '[') + std::string(100000, ']');
}

// A safetensors file whose header is `header`.
std::string safetensorsWith(const std::string &header)
{
    std::string file(8, '\0');
    uint64_t n = header.size();
    for (int i = 0; i < 8; ++i)
        file[size_t(i)] = char((n >> (8 * i)) & 0xff);
    return file + header;
}

} // namespace

class TestHostileFiles : public QObject
{
    Q_OBJECT

private slots:
    // Every JSON entry point refuses nesting past limits::kJsonDepth while parsing, and its message never formats
    // the deep value (the library's dump() recursed until the stack ran out).
    void deepJsonIsRefusedEverywhere_data()
    {
        QTest::addColumn<int>("entry");
        const char *names[] = {"view spec", "config.json", "safetensors header", "lesson view block", "vocab.json",
            "attention sweep", "checkpoint.json", "trainer.json", "output marker"};
        for (int i = 0; i < 9; ++i)
            QTest::newRow(names[i]) << i;
    }

    void deepJsonIsRefusedEverywhere()
    {
        QFETCH(int, entry);
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString(), deep = deepArray();
        QString message;
        switch (entry) {
        case 0:
            message
                = errorFrom([&] { ViewSpec::fromJson(R"({"view": "attention", "layer": )" + deep + "}", "s.json"); });
            break;
        case 1:
            message = errorFrom([&] { ModelConfig::fromJson(R"({"n_layer": )" + deep + "}", "config.json"); });
            break;
        case 2:
            writeFileAtomically(d + "/m.safetensors",
                safetensorsWith(R"({"w": {"dtype": "F32", "shape": )" + deep + R"(, "data_offsets": [0, 0]}})"));
            message = errorFrom([&] { SafetensorsFile(d + "/m.safetensors"); });
            break;
        case 3:
            message = errorFrom([&] {
                parseLesson("---\ntitle: t\nlecture: l\nminutes: 1\nmodels: reverse\n---\n## Step\n```view\n"
                        + std::string(R"({"layer": )") + deep + "}\n```\n",
                    "deep.md");
            });
            break;
        case 4:
            writeFileAtomically(d + "/vocab.json", R"({"a": )" + deep + "}");
            writeFileAtomically(d + "/merges.txt", "#version: 0.2\n");
            message = errorFrom([&] { tokenizerForDirectory(d); });
            break;
        case 5:
            message = errorFrom([&] { attention::parseAttentionSweep(R"({"kernels": )" + deep + "}", "sweep.json"); });
            break;
        case 6:
            writeFileAtomically(d + "/checkpoint.json", R"({"current": )" + deep + "}");
            message = errorFrom([&] { CheckpointDirectory(d).current(); });
            break;
        case 7: {
            const Result trained = runProgram({"train", "--task", "reverse", "--out", dir.path() + "/runProgram",
                "--steps", "1", "--eval-examples", "1", "--batch", "1"});
            QVERIFY2(trained.code == 0, qPrintable(trained.err));
            const std::string state = CheckpointDirectory(d + "/runProgram").current();
            writeFileAtomically(state + "/trainer.json", R"({"steps": )" + deep + "}");
            message = errorFrom([&] { Trainer::resume(d + "/runProgram"); });
            break;
        }
        case 8:
            std::filesystem::create_directories(d + "/out");
            writeFileAtomically(d + "/out/" + StagedDirectory::kMarker, R"({"program": )" + deep + "}");
            message = QString::fromStdString(StagedDirectory::refusal(d + "/out", "dump"));
            break;
        }
        QVERIFY2(message.contains("nested deeper than 64 levels"), qPrintable(message));
        QVERIFY2(message.size() < 1000, "the message carries the deep value");
    }

    // A value shown in a message is summarised, never dumped whole (dump() recurses).
    void messagesSummariseValues()
    {
        const nlohmann::json nested = parseJson("[[1], [2], [3]]", "x");
        QCOMPARE(shownJson(nested), std::string("an array of 3 values"));
        QCOMPARE(shownJson(parseJson(R"({"a": {"b": 1}})", "x")), std::string("an object of 1 key"));
        QCOMPARE(shownJson(parseJson("1.5", "x")), std::string("1.5"));
        const QString message = errorFrom([] { ModelConfig::fromJson(R"({"n_layer": [[[[1]]]]})", "config.json"); });
        QVERIFY2(message.contains("config.json: key 'n_layer' must be an integer, is an array of 1 value"),
            qPrintable(message));
        const QString header = errorFrom([] {
            QTemporaryDir dir;
            const std::string path = dir.path().toStdString() + "/m.safetensors";
            writeFileAtomically(path, safetensorsWith("{not json"));
            SafetensorsFile file(path);
        });
        QVERIFY2(header.contains("m.safetensors: header: not valid JSON"), qPrintable(header));
        QVERIFY2(!header.contains("[json.exception"), qPrintable(header));
    }

    // A FIFO (no writer) where a file is expected is refused at once by every command that reads one; it used to
    // hang in open() for ever.
    void specialFilesAreRefusedNotWaitedOn_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("reason");
        QTest::newRow("render --spec FIFO")
            << QStringList {"render", "--spec", "@DIR@/fifo", "--out", "@DIR@/x.png"} << "fifo: is a named pipe";
        QTest::newRow("config.json FIFO") << QStringList {"dump", "--model", "@DIR@/model", "--tokens", "1", "--out",
            "@DIR@/out"} << "config.json: is a named pipe";
        QTest::newRow("model.safetensors FIFO") << QStringList {"dump", "--model", "@DIR@/weights", "--tokens", "1",
            "--out", "@DIR@/out"} << "model.safetensors: is a named pipe";
        QTest::newRow("lesson check FIFO") << QStringList {"lesson", "check", "@DIR@/fifo.md"} << "is a named pipe";
        QTest::newRow("a device as a spec")
            << QStringList {"render", "--spec", "/dev/zero", "--out", "@DIR@/x.png"} << "is a character device";
    }

    void specialFilesAreRefusedNotWaitedOn()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const QString d = dir.path();
        QVERIFY(QDir().mkpath(d + "/model") && QDir().mkpath(d + "/weights"));
        QCOMPARE(::mkfifo((d + "/fifo").toLocal8Bit().constData(), 0600), 0);
        QCOMPARE(::mkfifo((d + "/fifo.md").toLocal8Bit().constData(), 0600), 0);
        QCOMPARE(::mkfifo((d + "/model/config.json").toLocal8Bit().constData(), 0600), 0);
        QVERIFY(QFile::copy(ATLAS_TEST_DATA "/gpt2_tiny/config.json", d + "/weights/config.json"));
        QCOMPARE(::mkfifo((d + "/weights/model.safetensors").toLocal8Bit().constData(), 0600), 0);
        args.replaceInStrings("@DIR@", d);
        QElapsedTimer timer;
        timer.start();
        const Result r = runProgram(args);
        QVERIFY2(r.code > 0, qPrintable(QString::number(r.code) + " " + r.err));
        QVERIFY2(r.err.contains(reason), qPrintable(r.err));
        QVERIFY2(timer.elapsed() < 60000, "waited on the special file");
    }

    // An output directory is replaced only when it is this program's own output of that kind, with nothing else
    // in it; a web project with a manifest.json, or a thesis beside step-01.png, is refused untouched.
    void outputDirectoriesNeverLoseTheUsersFiles()
    {
        QTemporaryDir dir;
        const QString d = dir.path(), tiny = ATLAS_TEST_DATA "/gpt2_tiny";
        const QStringList dump = {"dump", "--model", tiny, "--tokens", "1,2", "--out"};
        write(d + "/web/manifest.json", "{\"name\": \"my web app\"}");
        write(d + "/web/index.html", "<html></html>");
        Result r = runProgram(QStringList(dump) << d + "/web");
        QVERIFY(r.code > 0);
        QVERIFY2(r.err.contains("did not write"), qPrintable(r.err));
        QCOMPARE(read(d + "/web/index.html"), QByteArray("<html></html>"));
        QCOMPARE(read(d + "/web/manifest.json"), QByteArray("{\"name\": \"my web app\"}"));

        // Our own dump is replaced; once the user adds a file beside it, it is not.
        QCOMPARE(runProgram(QStringList(dump) << d + "/dump").code, 0);
        QVERIFY(QFile::exists(d + "/dump/" + StagedDirectory::kMarker));
        QCOMPARE(runProgram(QStringList(dump) << d + "/dump").code, 0);
        write(d + "/dump/notes.txt", "my notes");
        r = runProgram(QStringList(dump) << d + "/dump");
        QVERIFY(r.code > 0);
        QVERIFY2(r.err.contains("holds notes.txt, which transformer-atlas did not write"), qPrintable(r.err));
        QCOMPARE(read(d + "/dump/notes.txt"), QByteArray("my notes"));

        // Another kind of output of ours is not a dump either.
        QCOMPARE(
            runProgram({"new-model", "--out", d + "/model", "--layers", "1", "--d-model", "8", "--heads", "2"}).code,
            0);
        r = runProgram(QStringList(dump) << d + "/model");
        QVERIFY2(r.code > 0 && r.err.contains("another kind of output"), qPrintable(r.err));
        QVERIFY(QFile::exists(d + "/model/model.safetensors"));

        // lesson render: a step-01.png beside a thesis.
        write(d + "/thesis/step-01.png", "not ours");
        write(d + "/thesis/thesis.pdf", "chapter 1");
        r = runProgram({"lesson", "render", ATLAS_SOURCE_DIR "/lessons/01-self-attention.md", "--out", d + "/thesis"});
        QVERIFY(r.code > 0);
        QCOMPARE(read(d + "/thesis/thesis.pdf"), QByteArray("chapter 1"));
        QCOMPARE(read(d + "/thesis/step-01.png"), QByteArray("not ours"));
    }

    // A write that fails half-way (a full disk; here the file size limit, which fails write() the same way) is
    // reported with its reason and leaves the previous file as it was.
    void aFullDiskKeepsThePreviousFile()
    {
        QTemporaryDir dir;
        const QString pdf = dir.filePath("lesson.pdf"), spec = dir.filePath("spec.json"),
                      png = dir.filePath("view.png");
        const QString lesson = ATLAS_SOURCE_DIR "/lessons/03-masks.md";
        write(pdf, "the previous handout");
        write(png, "the previous figure");
        write(spec, R"({"model": ")" ATLAS_TEST_DATA R"(/gpt2_tiny", "tokens": [1, 2]})");
        for (const QStringList &args : {QStringList {"lesson", "export", lesson, "--out", pdf},
                 QStringList {"render", "--spec", spec, "--out", png}}) {
            QProcess p;
            p.setChildProcessModifier([] {
                ::signal(SIGXFSZ, SIG_IGN);
                const rlimit limit {4096, 4096};
                ::setrlimit(RLIMIT_FSIZE, &limit);
            });
            p.start(ATLAS_BINARY, args);
            QVERIFY(p.waitForFinished(120000));
            const QString err = QString::fromUtf8(p.readAllStandardError());
            QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 1, qPrintable(err));
            QVERIFY2(err.contains("cannot write: File too large"), qPrintable(err));
        }
        QCOMPARE(read(pdf), QByteArray("the previous handout"));
        QCOMPARE(read(png), QByteArray("the previous figure"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 3); // no temporary file left
    }

    // An output path that is a FIFO (or a link to one) is written into, never replaced by a regular file; one that
    // no process reads is refused at once.
    void specialOutputsAreWrittenThroughNotReplaced()
    {
        QTemporaryDir dir;
        const QString fifo = dir.filePath("out.json"), link = dir.filePath("link.json");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QVERIFY(QFile::link(fifo, link));
        const QStringList memory = {"memory", "--shape", "1x2x16", "--length", "8", "--repeat", "0", "--json"};

        Result r = runProgram(QStringList(memory) << fifo);
        QVERIFY2(r.code > 0 && r.err.contains("that no process reads"), qPrintable(r.err));

        QByteArray received;
        std::thread reader([&] {
            QFile f(fifo);
            if (f.open(QIODevice::ReadOnly))
                received = f.readAll();
        });
        QTest::qWait(200); // the reader is in open(), waiting for a writer
        r = runProgram(QStringList(memory) << link);
        reader.join();
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(received.contains("\"peak_bytes\""));
        struct stat st;
        QCOMPARE(::stat(fifo.toLocal8Bit().constData(), &st), 0);
        QVERIFY(S_ISFIFO(st.st_mode));
        QCOMPARE(::lstat(link.toLocal8Bit().constData(), &st), 0);
        QVERIFY(S_ISLNK(st.st_mode));
    }

    // A dangling symbolic link is followed (its target created), a loop refused with the path named.
    void symbolicLinks()
    {
        QTemporaryDir dir;
        const QString target = dir.filePath("made.json"), dangling = dir.filePath("dangling.json");
        QVERIFY(QFile::link(target, dangling));
        writeFileAtomically(dangling.toStdString(), "{}");
        QCOMPARE(read(target), QByteArray("{}"));
        QVERIFY(QFileInfo(dangling).isSymLink());

        const QString loop = dir.filePath("loop");
        QVERIFY(QFile::link(loop, loop));
        const QString message = errorFrom([&] { writeFileAtomically(loop.toStdString(), "{}"); });
        QVERIFY2(message.contains("loop: cannot follow the symbolic link"), qPrintable(message));
        const Result r = runProgram({"render", "--spec", loop, "--out", dir.filePath("x.png")});
        QVERIFY2(r.code == 1 && r.err.contains("loop:") && !r.err.contains("unexpected error"), qPrintable(r.err));
        const Result dumped = runProgram({"dump", "--model", loop, "--tokens", "1", "--out", dir.filePath("d")});
        QVERIFY2(dumped.code == 1 && !dumped.err.contains("unexpected error"), qPrintable(dumped.err));
    }

    // trainer.json's own keys are named, not the command line's options.
    void savedTrainingSettingsNameTheirKey()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("runProgram");
        QCOMPARE(runProgram({"train", "--task", "reverse", "--out", out, "--steps", "1", "--eval-examples", "1",
                                "--batch", "1"})
                     .code,
            0);
        const std::string state = CheckpointDirectory(out.toStdString()).current();
        const QString trainer = QString::fromStdString(state) + "/trainer.json";
        QByteArray json = read(trainer);
        json.replace("\"ffn_chunks\": 1", "\"ffn_chunks\": 100000");
        write(trainer, json);
        const Result r = runProgram({"train", "--out", out, "--resume"});
        QVERIFY2(r.code == 1 && r.err.contains("trainer.json: key 'ffn_chunks'") && !r.err.contains("--ffn-chunks"),
            qPrintable(r.err));
    }

    // lesson check runs the preparation that drawing runs: a step that cannot be drawn is a problem there, and
    // lesson render and export refuse it instead of writing a picture of the message.
    void stepsThatCannotBeDrawnFailTheCheck_data()
    {
        QTest::addColumn<QString>("view");
        QTest::addColumn<QString>("reason");
        QTest::newRow("experts on a dense model") << R"({"model": "reverse", "text": "abc>", "view": "experts"})"
                                                  << "experts";
        QTest::newRow("fills without a [MASK]")
            << R"({"model": "austen-mlm", "text": "It is a truth", "view": "fills"})"
            << "no [MASK] to fill";
        QTest::newRow("lsh without lsh") << R"({"model": "reverse", "text": "abcdef>", "view": "lsh"})"
                                         << "lsh";
        QTest::newRow("nsp on one sentence") << R"({"model": "austen-mlm", "text": "It is a truth", "view": )"
                                                R"("objective", "objective": "nsp"})"
                                             << "objective";
        QTest::newRow("neuron key past the input")
            << R"({"model": "reverse", "text": "abc>", "view": "neuron", "key": 9})"
            << "key 9";
    }

    void stepsThatCannotBeDrawnFailTheCheck()
    {
        QFETCH(QString, view);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const QString lesson = dir.filePath("bad.md");
        write(lesson,
            ("---\ntitle: Bad\nlecture: none\nminutes: 1\nmodels: reverse, austen-mlm\n---\n\n## A step\n\nText.\n\n"
             "```view\n"
                + view + "\n```\n")
                .toUtf8());
        Result r = runProgram({"lesson", "check", lesson});
        QVERIFY2(r.code == 1 && r.err.contains("bad.md:8:") && r.err.contains(reason), qPrintable(r.err));
        // A directory is every lesson in it: the good one beside passes, the bad one is named.
        write(dir.filePath("good.md"),
            "---\ntitle: Good\nlecture: none\nminutes: 1\nmodels: reverse\n---\n\n## A step\n\nText.\n\n```view\n"
            R"({"model": "reverse", "text": "abc>", "view": "attention"})"
            "\n```\n");
        r = runProgram({"lesson", "check", dir.path()});
        QVERIFY2(r.code == 1 && r.err.contains("bad.md:8:") && !r.err.contains("good.md"), qPrintable(r.err));
        QVERIFY2(runProgram({"lesson", "check", dir.filePath("good.md")}).code == 0, "the good lesson passes alone");
        r = runProgram({"lesson", "render", lesson, "--out", dir.filePath("steps")});
        QVERIFY2(r.code == 1, qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath("steps/step-01.png")));
        r = runProgram({"lesson", "export", lesson, "--out", dir.filePath("bad.pdf")});
        QVERIFY2(r.code == 1, qPrintable(r.err));
        QVERIFY(!QFile::exists(dir.filePath("bad.pdf")));
    }

    // The app starts, and keeps running, when the view saved at its last close is hostile: it crashed at every
    // start before (the message formatted the value with a recursive dump()).
    void theAppStartsDespiteABadSavedSession()
    {
        QTemporaryDir dir;
        {
            QSettings settings(dir.filePath("config/TransformerAtlas/transformer-atlas.conf"), QSettings::IniFormat);
            settings.setValue("session/spec", "{\"layer\": " + QString(100000, '[') + QString(100000, ']') + "}");
        }
        QProcess app;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.insert("XDG_CONFIG_HOME", dir.filePath("config"));
        env.insert("XDG_DATA_HOME", dir.filePath("data"));
        app.setProcessEnvironment(env);
        app.start(ATLAS_BINARY, {});
        QVERIFY(app.waitForStarted());
        const QString kept = dir.filePath("data/TransformerAtlas/transformer-atlas");
        QTRY_VERIFY_WITH_TIMEOUT(!QDir(kept).entryList({"rejected-session-*.json"}).isEmpty(), 30000);
        QVERIFY2(!app.waitForFinished(2000), qPrintable(QString::fromUtf8(app.readAllStandardError())));
        app.kill();
        app.waitForFinished();
    }

    // The number of steps is bounded, with the reason.
    void lessonStepsAreBounded()
    {
        std::string text = "---\ntitle: Long\nlecture: none\nminutes: 1\nmodels: reverse\n---\n";
        for (int i = 0; i < 201; ++i)
            text += "## Step " + std::to_string(i) + "\n\nText.\n\n```view\n{}\n```\n\n";
        const QString message = errorFrom([&] { parseLesson(text, "long.md"); });
        QVERIFY2(message.startsWith("long.md:") && message.contains("at most 200 steps"), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestHostileFiles)
#include "tst_hostilefiles.moc"
