#include "bench/guistallbenchmark.h"

#include "bench/stallmeter.h"
#include "guardedapplication.h"
#include "mainwindow.h"
#include "model/model.h"
#include "panels/trainpanel.h"
#include "pattern/patterneditorview.h"
#include "session/session.h"
#include "session/trainingworker.h"
#include "util/threadpriority.h"
#include "viewnavigator.h"

#include <QApplication>
#include <QEventLoop>
#include <QSlider>
#include <QStringList>
#include <QTemporaryDir>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace atlas {
namespace {

struct Sizes
{
    int layers, heads, width, vocab; // the large model (GPT-2 small: 12, 12, 768, 50257)
    int runTokens, tabTokens, patternTokens;
};

constexpr Sizes kFull {12, 12, 768, 50257, 8192, 4096, 16384};
constexpr Sizes kQuick {2, 2, 32, 256, 512, 256, 1024};
constexpr int kSettleMs = 500; // quiet this long: the action is over
constexpr int kLimitMs = 300000; // per action

void spin(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

// Runs the event loop until the session has had no job and no analysis under way for kSettleMs.
bool waitSettled(const Session &session, int limitMs = kLimitMs)
{
    QElapsedTimer total, quiet;
    total.start();
    quiet.start();
    while (total.elapsed() < limitMs) {
        spin(20);
        if (session.busy() || session.analysis().pending)
            quiet.restart();
        else if (quiet.elapsed() >= kSettleMs)
            return true;
    }
    return false;
}

std::string makeModel(
    const QTemporaryDir &dir, const char *name, int layers, int heads, int width, int vocab, int context)
{
    const nlohmann::json config = {{"n_layer", layers}, {"n_head", heads}, {"n_embd", width}, {"vocab_size", vocab},
        {"n_positions", context}, {"atlas_tokenizer", "bytes"}, {"activation_function", "gelu_new"}};
    const std::string path = dir.filePath(name).toStdString();
    Model::random(ModelConfig::fromJson(config.dump(), name), 1).save(path);
    return path;
}

QString textOf(int characters)
{
    const QString sentence = QStringLiteral("The cat sat on the mat, and the dog lay by the door. ");
    return sentence.repeated(characters / int(sentence.size()) + 1).left(characters);
}

class Report
{
public:
    void add(const QString &action, double stallMs, double cpuMs, double seconds, bool finished)
    {
        m_rows.push_back({action, stallMs, seconds, finished});
        std::printf("%-58s %9.0f ms %6.0f ms %8.1f s%s\n", qPrintable(action), stallMs, cpuMs, seconds,
            finished ? "" : "  (did not finish in time)");
        std::fflush(stdout);
    }
    int exitCode() const
    {
        double worst = 0;
        bool allFinished = true;
        for (const Row &r : m_rows) {
            worst = std::max(worst, r.stallMs);
            allFinished = allFinished && r.finished;
        }
        std::printf("longest stall over every action: %.0f ms (goal: at most 100 ms)\n", worst);
        return allFinished ? 0 : 1;
    }

private:
    struct Row
    {
        QString action;
        double stallMs, seconds;
        bool finished;
    };
    std::vector<Row> m_rows;
};

// Measures `action` (which starts the work) until `done` says it is over.
template <typename Action, typename Done>
void measure(Report &report, StallMeter &meter, const QString &name, Action action, Done done)
{
    meter.start();
    action();
    const bool finished = done();
    meter.stop();
    report.add(name, meter.longestStallMs(), meter.longestStallCpuMs(), meter.elapsedMs() / 1000, finished);
}

} // namespace

int runGuiStallBenchmark(int argc, char **argv)
{
    bool quick = false;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick")
            quick = true;
        else if (arg == "--same-priority") // background work at the window's priority, as before the change
            disableBackgroundPriority();
        else {
            std::fprintf(stderr, "bench-gui: unknown option '%s' (options: --quick, --same-priority)\n", argv[i]);
            return 2;
        }
    }
    const Sizes sizes = quick ? kQuick : kFull;
    lowerThreadsStartedSoFar(); // as the app does
    GuardedApplication app(argc, argv);
    QApplication::setOrganizationName("TransformerAtlasBench"); // the user's own settings stay untouched
    QApplication::setApplicationName("bench-gui");

    std::printf("making the models … ");
    std::fflush(stdout);
    QTemporaryDir dir;
    const std::string large = makeModel(dir, "large", sizes.layers, sizes.heads, sizes.width, sizes.vocab, 1024);
    const std::string longContext = makeModel(dir, "long", 1, 2, 64, 256, sizes.patternTokens);
    std::printf("done\n%-58s %12s %9s %10s\n", "action", "longest stall", "its CPU", "duration");

    Session session;
    ViewSpec spec;
    spec.text = "Hello, world.";
    session.setSpec(spec);
    MainWindow window(&session);
    window.resize(1280, 720);
    window.show();
    session.openModel("tiny-bytes");
    waitSettled(session);

    Report report;
    StallMeter meter;
    const auto settled = [&] { return waitSettled(session); };
    measure(
        report, meter,
        QStringLiteral("open a %1×%2×%3 model (vocabulary %4)")
            .arg(sizes.layers)
            .arg(sizes.heads)
            .arg(sizes.width)
            .arg(sizes.vocab),
        [&] { session.openModel(QString::fromStdString(large)); },
        [&] { return settled() && session.model() && session.model()->config.layers == sizes.layers; });

    session.openModel(QString::fromStdString(longContext));
    waitSettled(session);
    measure(
        report, meter, QStringLiteral("run %1 tokens").arg(sizes.runTokens),
        [&] { session.setText(textOf(sizes.runTokens)); },
        [&] {
            return settled() && int(session.input().tokens.size()) == sizes.runTokens && session.program()
                && session.cursor() == int(session.program()->ops.size());
        });

    session.setText(textOf(sizes.tabTokens));
    waitSettled(session);
    ViewNavigator *navigator = window.navigator();
    for (int i = 0; i < navigator->count(); ++i) {
        meter.start();
        navigator->setCurrentIndex(i);
        const bool finished = settled();
        meter.stop();
        report.add(QStringLiteral("switch to the %1 tab at %2 tokens")
                       .arg(QString::fromStdString(navigator->currentKind()))
                       .arg(sizes.tabTokens),
            meter.longestStallMs(), meter.longestStallCpuMs(), meter.elapsedMs() / 1000, finished);
    }

    auto *train = window.findChild<TrainPanel *>();
    measure(
        report, meter, QStringLiteral("start training, 3 s, stop"), [&] { train->start(); },
        [&] {
            spin(3000);
            train->stop();
            QElapsedTimer waited;
            waited.start();
            while (train->worker()->running() && waited.elapsed() < kLimitMs)
                spin(20);
            return !train->worker()->running() && train->stepShown() > 0;
        });

    navigator->setCurrentKind("pattern");
    session.setText(textOf(sizes.patternTokens));
    waitSettled(session);
    auto *pattern = qobject_cast<PatternEditorView *>(navigator->currentView());
    QSlider *slider = nullptr;
    for (QSlider *s : pattern->findChildren<QSlider *>())
        if (!slider && s->isVisible() && s->maximum() > s->minimum())
            slider = s;
    measure(
        report, meter, QStringLiteral("5 pattern edits at %1 tokens").arg(sizes.patternTokens),
        [&] {
            for (int edit = 0; edit < 5 && slider; ++edit) {
                slider->setValue(slider->value() == slider->minimum() ? slider->minimum() + 1 : slider->minimum());
                spin(300);
            }
        },
        [&] {
            const bool done = waitSettled(session);
            QElapsedTimer waited;
            waited.start();
            while (pattern->computing() && waited.elapsed() < kLimitMs)
                spin(20);
            return done && !pattern->computing() && slider && pattern->message().isEmpty()
                && int(session.input().tokens.size()) == sizes.patternTokens;
        });
    return report.exitCode();
}

} // namespace atlas
