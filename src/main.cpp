#include "bench/guistallbenchmark.h"
#include "cli/commands.h"
#include "guardedapplication.h"
#include "mainwindow.h"
#include "session/savedspec.h"
#include "session/session.h"
#include "style/theme.h"
#include "util/blasthreads.h"
#include "util/cpucheck.h"
#include "util/error.h"
#include "util/memorycheck.h"
#include "util/threadpriority.h"

#include <QApplication>
#include <QSettings>
#include <QStandardPaths>

#include <algorithm>
#include <cstdio>
#include <string>

// With a subcommand (dump, render, bench …) this is the command line; with none it opens the app.
int main(int argc, char **argv)
{
    if (const char *missing = atlas::missingCpuFeature()) {
        std::fprintf(stderr,
            "transformer-atlas: this build needs a CPU with %s, which this one lacks; build it for this CPU from the "
            "source (./atlas build)\n",
            missing);
        return 1;
    }
    atlas::startWithShortBlasSpin(argv);
    atlas::reuseFreedTensorMemory();
    const bool help = std::any_of(argv + 1, argv + argc,
        [](const char *arg) { return std::string(arg) == "--help" || std::string(arg) == "-h"; });
    if (argc > 1 && std::string(argv[1]) == "bench-gui" && !help) // the one command that needs the window
        return atlas::runGuiStallBenchmark(argc, argv);
    if (const int code = atlas::runCommandLine(argc, argv); code >= 0)
        return code;

    atlas::lowerThreadsStartedSoFar(); // OpenBLAS's workers: the window's thread keeps its core
    atlas::GuardedApplication app(argc, argv);
    QApplication::setOrganizationName("TransformerAtlas");
    QApplication::setApplicationName("transformer-atlas");
    QApplication::setApplicationDisplayName("Transformer Atlas");
    QFont font = QApplication::font();
    font.setPointSizeF(std::max(10.0, font.pointSizeF()));
    QApplication::setFont(font);

    atlas::Session session;
    QSettings settings;
    // The first launch opens a trained model on its sample text (the defaults' tiny-bytes has random weights).
    const bool firstLaunch = !settings.contains("session/spec");
    atlas::RestoredSpec restored
        = atlas::restoreSavedSpec(settings, QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation));
    if (firstLaunch)
        restored.spec.model = "austen";
    const atlas::OpenablePath asked = atlas::appArgument(argc, argv); // transformer-atlas PATH, or --model M
    using Kind = atlas::OpenablePath::Kind;
    const atlas::ViewSpec &spec = restored.spec;
    atlas::applyTheme(spec.theme == "dark");
    session.setSpec(spec);
    atlas::MainWindow window(&session);
    QObject::connect(&app, &atlas::GuardedApplication::unexpectedError, &window,
        [&window](const QString &message) { window.showProblem(QObject::tr("Unexpected error"), message); });
    window.show();
    if (!restored.problem.isEmpty())
        window.showProblem(QObject::tr("Saved session"), restored.problem);
    const QString path = QString::fromStdString(asked.path);
    if (asked.kind == Kind::Model) // the model asked for, on its sample input
        session.openModel(path, true);
    else if (asked.kind != Kind::ViewSpec || !window.openViewSpec(path)) // a spec names its own model
        session.openModel(QString::fromStdString(spec.model), firstLaunch && asked.kind == Kind::None);
    if (asked.kind == Kind::Lesson)
        window.openLesson(path); // its first step sets its own model
    else if (firstLaunch && asked.kind == Kind::None)
        window.showWelcome();
    return app.exec();
}
