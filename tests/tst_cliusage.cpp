// The command line's usage and help: one table of commands and options (commandtable.h) that the usage, each
// subcommand's help and the options accepted all read.
#include "attention/attentionkernel.h"
#include "clitesting.h"
#include "commandtable.h"
#include "testbundle.h"
#include "train/trainingrunoptions.h"

#include <algorithm>

#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

class TestCliUsage : public QObject
{
    Q_OBJECT

    using Result = atlas::testing::CliResult;
    static Result run(const QStringList &args) { return atlas::testing::runCli(args); }

private slots:
    // Every subcommand answers --help (anywhere after its name) with its part of the usage and runs nothing; the
    // usage lists exactly the subcommands there are.
    void everySubcommandHasItsHelp()
    {
        const Result all = run({"help"});
        QCOMPARE(all.code, 0);
        QSet<QString> listed;
        const QRegularExpression head(
            QStringLiteral("^  transformer-atlas ([a-z-]+)"), QRegularExpression::MultilineOption);
        for (auto it = head.globalMatch(all.out); it.hasNext();)
            listed.insert(it.next().captured(1));
        QSet<QString> names;
        for (const std::string &name : atlas::commandNames())
            names.insert(QString::fromStdString(name));
        QCOMPARE(listed, names);
        for (const QString &name : names) {
            const Result r = run({name, "--help"});
            QVERIFY2(r.code == 0, qPrintable(name + ": " + r.err));
            QVERIFY2(
                r.out.startsWith("transformer-atlas " + name + ":\n\n  transformer-atlas " + name), qPrintable(r.out));
            QVERIFY(r.out.contains("M is a built-in model name"));
            QVERIFY2(!r.out.contains(QRegularExpression(
                         "^  transformer-atlas (?!" + name + "\\b)", QRegularExpression::MultilineOption)),
                qPrintable(name + " shows another subcommand:\n" + r.out));
            QCOMPARE(run({"help", name}).out, r.out);
        }
        // The kernels the usage names are the descriptors' (attentionKernels()), never a list written by hand.
        const Result bench = run({"bench-attention", "--help"}), pattern = run({"bench-pattern", "--help"});
        for (const atlas::attention::AttentionKernelKind &k : atlas::attention::attentionKernels()) {
            QVERIFY2(bench.out.contains(QString::fromStdString(k.kind)), k.kind.c_str());
            QCOMPARE(pattern.out.contains(QString::fromStdString(", " + k.kind))
                    || pattern.out.contains(QString::fromStdString(" " + k.kind + ",")),
                k.fixedPattern);
        }
        const Result lesson = run({"lesson", "export", "--help"});
        QCOMPARE(lesson.code, 0);
        QVERIFY(lesson.out.contains("lesson export FILE --out FILE.pdf"));
        QVERIFY(lesson.out.contains("lesson check"));
        QTemporaryDir dir;
        const Result dump = run({"dump", "--model", "reverse", "--text", "ab", "--out", dir.path() + "/out", "-h"});
        QCOMPARE(dump.code, 0);
        QVERIFY(!QFileInfo::exists(dir.path() + "/out")); // help runs nothing
        QVERIFY(dump.out.contains("--logit-lens"));
        // The help column lines up whatever characters a value's name has ("--weight-decay λ", "--funnel G1,G2,…").
        const Result train = run({"train", "--help"});
        int lines = 0;
        for (const QString &line : train.out.split('\n')) {
            if (!line.startsWith("    --") || line.indexOf(QStringLiteral("  "), 6) < 0)
                continue;
            ++lines;
            QVERIFY2(line.size() > 42 && line[41] == ' ' && line[42] != ' ', qPrintable(line));
        }
        QVERIFY(lines > 30);
    }

    // `train` takes every option of a training run's table (train/trainingrunoptions.h), with its value's name and
    // help: the command line, lessons and the Train panel read the one table.
    // A view folder's subcommands (its CLI part) are in the table, after the analyses', and run: `patch` is the
    // Patching view's, in src/views/patching/.
    void aViewFoldersSubcommandsAreInTheTable()
    {
        const std::vector<atlas::CliCommand> folders = atlas::viewFolderCommands();
        QVERIFY(
            std::any_of(folders.begin(), folders.end(), [](const atlas::CliCommand &c) { return c.name == "patch"; }));
        const std::vector<atlas::CliCommand> &all = atlas::cliCommands();
        for (const atlas::CliCommand &c : folders) {
            const atlas::CliCommand *found = atlas::findCliCommand(c.name);
            QVERIFY2(found && found->run, c.name.c_str());
            QVERIFY2(std::count_if(all.begin(), all.end(), [&](const atlas::CliCommand &o) { return o.name == c.name; })
                    == 1,
                c.name.c_str());
        }
        const auto at = [&](const char *name) {
            return std::find_if(all.begin(), all.end(), [&](const atlas::CliCommand &c) { return c.name == name; });
        };
        QVERIFY(at("analyze-heads") + 1 == at("circuit")); // the folders' commands after it, in the folders' order
        QVERIFY(at("circuit") + 1 == at("path-patch"));
        QVERIFY(at("path-patch") + 1 == at("dla"));
        QVERIFY(at("dla") + 1 == at("needle"));
        QVERIFY(at("needle") + 1 == at("patch"));
        const Result r = run({"patch", "--model", "reverse", "--text", "abcdef>fedcba", "--target", "a",
            "--corrupted-text", "abcdeg>gedcba", "--position", "6"});
        QVERIFY2(r.code == 0 && r.out.contains("recovered fraction"), qPrintable(r.err));
    }

    void trainTakesTheTrainingRunsOptions()
    {
        const atlas::CliCommand *train = atlas::findCliCommand("train");
        QVERIFY(train);
        for (const atlas::TrainingRunOption &o : atlas::trainingRunOptions()) {
            const auto it = std::find_if(train->options.begin(), train->options.end(),
                [&](const atlas::CliOption &c) { return c.name == o.name; });
            QVERIFY2(it != train->options.end(), o.name.c_str());
            QCOMPARE(it->value, o.valueName);
            QCOMPARE(it->help, o.help);
        }
        QTemporaryDir dir;
        const Result tooMany = run({"train", "--task", "reverse", "--out", dir.path() + "/t", "--steps", "20000000"});
        QCOMPARE(tooMany.code, 1);
        QVERIFY2(tooMany.err.contains("option --steps: 20000000 is out of range (allowed: 1 to 10000000)"),
            qPrintable(tooMany.err));
        QVERIFY(!QFileInfo::exists(dir.path() + "/t"));
    }

    // The usage's synopses name only options their command takes, and every option says what it does (the usage,
    // the help and the options accepted are one table: commandtable.h).
    void theUsageNamesOnlyTheOptionsATakes()
    {
        const QRegularExpression option(QStringLiteral("--([a-z][a-z-]*)"));
        for (const atlas::CliCommand &c : atlas::cliCommands()) {
            QSet<QString> known;
            for (const atlas::CliOption &o : c.options) {
                QVERIFY2(!o.help.empty(), (c.name + " --" + o.name).c_str());
                QVERIFY2(!known.contains(QString::fromStdString(o.name)), (c.name + " --" + o.name + " twice").c_str());
                known.insert(QString::fromStdString(o.name));
            }
            for (const atlas::CliForm &form : c.forms)
                for (auto it = option.globalMatch(QString::fromStdString(form.synopsis + " " + form.summary));
                     it.hasNext();) {
                    const QString name = it.next().captured(1);
                    QVERIFY2(known.contains(name), qPrintable(QString::fromStdString(c.name) + ": --" + name));
                }
        }
    }
};

QTEST_GUILESS_MAIN(TestCliUsage)
#include "tst_cliusage.moc"
