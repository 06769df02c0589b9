// The ways a newcomer finds their way in the window: the quick search (Ctrl+K) and the first launch's welcome.
#include "mainwindow.h"

#include "dialogs/quickopen.h"
#include "dialogs/welcomedialog.h"
#include "io/atomicfile.h"
#include "io/limits.h"
#include "lesson/lessonlibrary.h"
#include "model/builtinmodels.h"
#include "model/openablepath.h"
#include "session/lessonplayer.h"
#include "session/session.h"
#include "ui_mainwindow.h"
#include "view/viewkinds.h"
#include "view/viewspec.h"
#include "viewnavigator.h"

#include <QAction>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QSettings>

namespace atlas {

void MainWindow::quickOpen()
{
    std::vector<QuickOpenEntry> entries;
    const std::vector<ViewKind> &kinds = viewKinds();
    for (size_t i = 0; i < kinds.size(); ++i)
        entries.push_back({tr("View"), tr(kinds[i].title.c_str()),
            tr(kinds[i].group.c_str()) + QStringLiteral(": ") + tr(kinds[i].summary.c_str()),
            [this, i] { m_navigator->setCurrentIndex(int(i)); }});
    if (const std::string directory = lessonsDirectory(); !directory.empty())
        for (const LessonEntry &lesson : listLessons(directory))
            if (lesson.problem.empty())
                entries.push_back(
                    {tr("Lesson"), QString::fromStdString(lesson.title), QString::fromStdString(lesson.lecture),
                        [this, path = QString::fromStdString(lesson.path)] { openLesson(path); }});
    for (const BuiltinModel &model : builtinModels())
        entries.push_back({tr("Model"), QString::fromStdString(model.name), QString::fromStdString(model.description),
            [this, name = QString::fromStdString(model.name)] { m_session->openModel(name, true); }});
    QuickOpen dialog(std::move(entries), this);
    if (dialog.exec() == QDialog::Accepted && dialog.chosen() >= 0)
        dialog.entry(dialog.chosen()).open();
}

WelcomeDialog *MainWindow::showWelcome(bool always)
{
    QSettings settings;
    if (!always && settings.value("welcome/dismissed", false).toBool())
        return nullptr;
    auto *welcome = new WelcomeDialog(QString::fromStdString(m_session->spec().model), this);
    welcome->setAttribute(Qt::WA_DeleteOnClose);
    connect(welcome, &QDialog::finished, this, [] { QSettings().setValue("welcome/dismissed", true); });
    connect(welcome, &WelcomeDialog::openChosen, m_ui->actionOpenModel, &QAction::trigger);
    connect(welcome, &WelcomeDialog::lessonChosen, this, [this] {
        const std::string directory = lessonsDirectory();
        const std::vector<LessonEntry> lessons
            = directory.empty() ? std::vector<LessonEntry> {} : listLessons(directory);
        if (!lessons.empty())
            openLesson(QString::fromStdString(lessons.front().path));
    });
    welcome->open();
    return welcome;
}

void MainWindow::openLesson(const QString &path)
{
    if (!m_lessons->open(path))
        return;
    if (QDockWidget *dock = findChild<QDockWidget *>(tr("Lessons"))) {
        dock->show();
        dock->raise();
    }
}

namespace {

// What one local file or folder dropped on the window names, or Kind::None.
OpenablePath droppedPath(const QMimeData *data)
{
    if (!data || !data->hasUrls() || data->urls().size() != 1 || !data->urls().front().isLocalFile())
        return {};
    return openablePath(data->urls().front().toLocalFile().toStdString());
}

} // namespace

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    if (droppedPath(event->mimeData()).kind != OpenablePath::Kind::None)
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    const OpenablePath dropped = droppedPath(event->mimeData());
    const QString path = QString::fromStdString(dropped.path);
    switch (dropped.kind) {
    case OpenablePath::Kind::None:
        return;
    case OpenablePath::Kind::Model:
        m_session->openModel(path, true); // on its sample input
        break;
    case OpenablePath::Kind::Lesson:
        openLesson(path);
        break;
    case OpenablePath::Kind::ViewSpec:
        openViewSpec(path);
        break;
    }
    event->acceptProposedAction();
}

bool MainWindow::openViewSpec(const QString &path)
{
    try {
        const std::string file = path.toStdString();
        m_session->applySpec(ViewSpec::fromJson(readFile(file, limits::kViewSpecBytes), file), path);
        return true;
    } catch (const std::exception &e) { // atlas::Error, or std::bad_alloc: the app keeps running
        showProblem(tr("Open View Spec"), QString::fromStdString(e.what()));
        return false;
    }
}

} // namespace atlas
