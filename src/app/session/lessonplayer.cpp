#include "session/lessonplayer.h"

#include "lesson/lessonlibrary.h"
#include "session/session.h"
#include "util/error.h"

#include <QFileInfo>
#include <QSettings>

#include <algorithm>

namespace atlas {

namespace {

QString positionKey(const QString &path)
{
    return "lessons/position/" + QFileInfo(path).absoluteFilePath();
}

} // namespace

LessonPlayer::LessonPlayer(Session *session, QObject *parent)
    : QObject(parent)
    , m_session(session)
    , m_stepJob([this](StepView view) { adopt(std::move(view)); })
{
    connect(&m_watcher, &QFileSystemWatcher::fileChanged, this, &LessonPlayer::fileChanged);
}

bool LessonPlayer::open(const QString &path)
{
    return load(path, false);
}

bool LessonPlayer::load(const QString &path, bool keepStep)
{
    Lesson lesson;
    try {
        lesson = readLesson(path.toStdString());
        if (lesson.steps.empty())
            throw Error(path.toStdString() + ": the lesson has no steps");
    } catch (const std::exception &e) {
        emit errorOccurred(QString::fromStdString(e.what()));
        return false;
    }
    if (!m_watcher.files().isEmpty())
        m_watcher.removePaths(m_watcher.files());
    m_watcher.addPath(path);
    // A lesson opens at its start; where it was left is offered (the panel's "Resume at step N"), not imposed on a
    // class that starts afresh.
    const int step = keepStep ? m_step : 0;
    m_lesson = std::move(lesson);
    if (!keepStep)
        m_leftAt = std::clamp(QSettings().value(positionKey(path), 0).toInt(), 0, stepCount() - 1);
    m_step = std::clamp(step, 0, stepCount() - 1);
    emit lessonChanged();
    applyStep();
    return true;
}

void LessonPlayer::close()
{
    m_stepJob.drop();
    if (!m_watcher.files().isEmpty())
        m_watcher.removePaths(m_watcher.files());
    m_lesson.reset();
    m_stepSpec.reset();
    m_step = 0;
    emit lessonChanged();
}

void LessonPlayer::goTo(int step)
{
    if (!m_lesson || step < 0 || step >= stepCount() || step == m_step)
        return;
    m_step = step;
    QSettings().setValue(positionKey(QString::fromStdString(m_lesson->path)), m_step);
    applyStep();
}

void LessonPlayer::resetStep()
{
    if (m_lesson)
        applyStep();
}

void LessonPlayer::applyStep()
{
    m_stepSpec.reset();
    emit stepChanged(m_step);
    const Lesson lesson = *m_lesson;
    const int step = m_step;
    m_stepJob.start([lesson, step](const std::atomic<bool> &) {
        StepView view {step, std::nullopt, {}};
        try {
            view.spec = stepViewSpec(lesson, lesson.steps.at(size_t(step)));
        } catch (const std::exception &e) {
            view.error = QString::fromStdString(e.what());
        }
        return view;
    });
}

void LessonPlayer::adopt(StepView view)
{
    if (!m_lesson || view.step != m_step)
        return;
    if (!view.spec) {
        emit errorOccurred(view.error);
        return;
    }
    m_stepSpec = view.spec;
    const LessonStep &step = currentStep();
    m_session->applySpec(beforeReveal(*view.spec, step),
        QStringLiteral("%1:%2").arg(QString::fromStdString(m_lesson->path)).arg(step.specLine));
    for (LessonAction action : step.actions)
        if (action.kind == LessonAction::Kind::Train) {
            if (m_trainingStepLimit > 0)
                action.count = std::min(action.count, m_trainingStepLimit);
            emit trainRequested(action);
        }
    emit stepApplied();
}

bool LessonPlayer::isCorrect(const LessonQuestion &question, const std::vector<int> &selected)
{
    std::vector<int> a = selected, b = question.correct;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
}

PredictAnswer LessonPlayer::reveal(const LessonQuestion &question) const
{
    const auto trace = m_session->trace();
    if (!trace || !m_session->model())
        throw Error("the model has not run yet");
    return predictAnswer(*trace, question, m_session->spec(), m_session->model()->config);
}

void LessonPlayer::addCurrentViewAsStep(const QString &title)
{
    if (!m_lesson)
        return;
    LessonStep step;
    step.title = title.trimmed().isEmpty() ? QStringLiteral("Step %1").arg(stepCount() + 1).toStdString()
                                           : title.trimmed().toStdString();
    step.spec = m_session->spec();
    step.spec.op = ""; // the stepper's position, by name: the op just run
    if (m_session->program() && m_session->cursor() > 0 && m_session->cursor() < int(m_session->program()->ops.size()))
        step.spec.op = m_session->program()->ops[size_t(m_session->cursor() - 1)].name;
    const QString path = QString::fromStdString(m_lesson->path);
    try {
        appendLessonStep(m_lesson->path, stepToText(step));
    } catch (const std::exception &e) {
        emit errorOccurred(QString::fromStdString(e.what()));
        return;
    }
    m_step = stepCount(); // the new step, once read again
    QSettings().setValue(positionKey(path), m_step);
    load(path, true);
}

void LessonPlayer::fileChanged()
{
    if (!m_lesson)
        return;
    const QString path = QString::fromStdString(m_lesson->path);
    // An atomic save replaces the file: the watcher lost it, and the new one is watched again by load().
    if (QFileInfo::exists(path) && !load(path, true) && !m_watcher.files().contains(path))
        m_watcher.addPath(path); // a save that does not parse yet: keep watching for the next
}

} // namespace atlas
