// The lessons in the window: the Lessons dock, its menu and shortcuts, presentation mode and lesson steps that train.
#include "mainwindow.h"

#include "dialogs/courseoutlinedialog.h"
#include "lesson/lessonlibrary.h"
#include "panels/lessonpanel.h"
#include "panels/trainpanel.h"
#include "presentationmode.h"
#include "session/lessonplayer.h"
#include "ui_mainwindow.h"
#include "viewnavigator.h"

#include <QAction>
#include <QActionGroup>
#include <QDockWidget>
#include <QFileDialog>
#include <QInputDialog>
#include <QMenu>

#include <cmath>

namespace atlas {

void MainWindow::connectLessons()
{
    QDockWidget *dock = findChild<QDockWidget *>(tr("Lessons"));
    m_presentation = new PresentationMode(this, dock, m_lessonPanel, m_lessons, m_session, m_zoom, m_navigator);
    m_ui->actionShowLessons->setCheckable(true);
    connect(m_ui->actionShowLessons, &QAction::triggered, dock, &QDockWidget::setVisible);
    connect(dock, &QDockWidget::visibilityChanged, m_ui->actionShowLessons, &QAction::setChecked);
    connect(m_ui->actionOpenLessonFile, &QAction::triggered, this, &MainWindow::openLessonFile);
    connect(m_ui->actionCourseOutline, &QAction::triggered, this, [this] {
        auto *outline = new CourseOutlineDialog(QString::fromStdString(courseOutlineIn(lessonsDirectory())), this);
        outline->setAttribute(Qt::WA_DeleteOnClose);
        connect(outline, &CourseOutlineDialog::lessonRequested, this, &MainWindow::openLesson);
        outline->show(); // beside the window: the lecturer keeps it open while preparing
    });
    connect(m_lessonPanel, &LessonPanel::openFileRequested, this, &MainWindow::openLessonFile);
    connect(m_ui->actionNextStep, &QAction::triggered, m_lessons, &LessonPlayer::next);
    connect(m_ui->actionPrevStep, &QAction::triggered, m_lessons, &LessonPlayer::previous);
    connect(m_ui->actionResetStep, &QAction::triggered, m_lessons, &LessonPlayer::resetStep);
    connect(m_ui->actionAddStep, &QAction::triggered, this, &MainWindow::addCurrentViewAsStep);
    connect(m_ui->actionPresentation, &QAction::toggled, m_presentation, &PresentationMode::setActive);
    connect(m_presentation, &PresentationMode::activeChanged, m_ui->actionPresentation, &QAction::setChecked);
    auto *textSize = new QMenu(tr("Presentation &Text"), this);
    textSize->setToolTip(tr("How large presentation mode draws the text (on top of the projector's own size)"));
    auto *sizes = new QActionGroup(textSize);
    for (const auto &[scale, name] : PresentationMode::textScales()) {
        QAction *choice = textSize->addAction(tr(name));
        choice->setCheckable(true);
        choice->setChecked(std::abs(scale - PresentationMode::textScale()) < 1e-6);
        sizes->addAction(choice);
        connect(choice, &QAction::triggered, this, [scale = scale] { PresentationMode::setTextScale(scale); });
    }
    m_ui->menuLessons->insertMenu(m_ui->actionPresentation, textSize);
    m_ui->menuLessons->insertAction(textSize->menuAction(), m_ui->actionPresentation);
    // A presentation clicker sends the arrows as well as Page Up / Page Down; outside presentation mode the arrows
    // stay with the widget that has focus.
    auto *right = new QAction(tr("Next Step"), this);
    right->setShortcut(Qt::Key_Right);
    auto *left = new QAction(tr("Previous Step"), this);
    left->setShortcut(Qt::Key_Left);
    for (QAction *arrow : {right, left}) {
        arrow->setEnabled(false);
        addAction(arrow);
        connect(m_presentation, &PresentationMode::activeChanged, arrow, &QAction::setEnabled);
    }
    connect(right, &QAction::triggered, m_lessons, &LessonPlayer::next);
    connect(left, &QAction::triggered, m_lessons, &LessonPlayer::previous);
    auto syncLessonActions = [this, dock] {
        const bool open = m_lessons->isOpen();
        for (QAction *a : {m_ui->actionNextStep, m_ui->actionPrevStep, m_ui->actionResetStep, m_ui->actionAddStep})
            a->setEnabled(open);
        if (open)
            dock->show();
        else if (m_presentation->isActive())
            m_presentation->setActive(false);
    };
    connect(m_lessons, &LessonPlayer::lessonChanged, this, syncLessonActions);
    connect(m_lessons, &LessonPlayer::stepApplied, m_navigator, &ViewNavigator::scrollToOrigin);
    syncLessonActions();
    connect(m_lessons, &LessonPlayer::errorOccurred, this,
        [this](const QString &message) { showProblem(tr("Lesson"), message); });
    connect(m_lessons, &LessonPlayer::trainRequested, this, [this](const LessonAction &action) {
        findChild<QDockWidget *>(tr("Train"))->show();
        findChild<QDockWidget *>(tr("Train"))->raise();
        m_train->runLessonAction(action);
    });
}

void MainWindow::openLessonFile()
{
    const QString path
        = QFileDialog::getOpenFileName(this, tr("Open a lesson"), QString(), tr("Lessons (*.md);;All files (*)"));
    if (!path.isEmpty())
        m_lessons->open(path);
}

void MainWindow::addCurrentViewAsStep()
{
    if (!m_lessons->isOpen())
        return;
    bool ok = false;
    const QString title = QInputDialog::getText(this, tr("Add current view as step"),
        tr("Title of the new step (its text and questions are written in the lesson file):"), QLineEdit::Normal,
        tr("Step %1").arg(m_lessons->stepCount() + 1), &ok);
    if (ok)
        m_lessons->addCurrentViewAsStep(title);
}

} // namespace atlas
