#pragma once

#include "lesson/lesson.h"
#include "lesson/lessoncheck.h"
#include "viewmodel/latestjob.h"

#include <QFileSystemWatcher>
#include <QObject>
#include <QString>

#include <optional>

namespace atlas {

class Session;

// Plays a lesson on a Session: opening a step works out its view (lesson/lessoncheck.h stepViewSpec, on a thread of
// its own: a generate action runs the model) and applies it whole to the session, which stays fully interactive;
// resetStep() applies it again. The position in each lesson is kept between runs, and the file is read again when
// it changes on disk. A train action is handed on (trainRequested): the Train panel runs it.
class LessonPlayer : public QObject
{
    Q_OBJECT

public:
    explicit LessonPlayer(Session *session, QObject *parent = nullptr);

    // Opens a lesson at its first step; leftAt() says where it was left last time. On failure the lesson open before
    // stays, and errorOccurred says why ("path:line: …").
    bool open(const QString &path);
    // The step the lesson was left at when last open (kept between runs), as it was when opened; 0 when none.
    int leftAt() const { return m_leftAt; }
    void close();
    bool isOpen() const { return m_lesson.has_value(); }
    const Lesson &lesson() const { return *m_lesson; }
    const LessonStep &currentStep() const { return m_lesson->steps.at(size_t(m_step)); }
    int stepIndex() const { return m_step; }
    int stepCount() const { return m_lesson ? int(m_lesson->steps.size()) : 0; }
    // The view the current step applies (once its actions ran); empty until worked out.
    const std::optional<ViewSpec> &stepSpec() const { return m_stepSpec; }

    void goTo(int step);
    void next() { goTo(m_step + 1); }
    void previous() { goTo(m_step - 1); }
    void resetStep(); // the step's view again, after the class changed the text or the head

    // Train actions run at most `steps` steps (0: as the lesson writes them): for a walk that checks what each step
    // shows rather than what its training reaches.
    void setTrainingStepLimit(int steps) { m_trainingStepLimit = steps; }

    // Whether `selected` (indices into choices) is exactly the question's right answer.
    static bool isCorrect(const LessonQuestion &question, const std::vector<int> &selected);
    // A predict question's answer on the session's current trace. Throws atlas::Error.
    PredictAnswer reveal(const LessonQuestion &question) const;

    // Appends the session's view on screen as a new step titled `title` to the lesson's file (saved atomically),
    // and moves to it.
    void addCurrentViewAsStep(const QString &title);

signals:
    void lessonChanged(); // opened, closed or read again
    void stepChanged(int step); // a step opens: its view is being worked out
    void stepApplied(); // the step's view went to the session
    void errorOccurred(const QString &message);
    void trainRequested(const atlas::LessonAction &action);

private:
    bool load(const QString &path, bool keepStep);
    void applyStep();
    void fileChanged();

    struct StepView
    {
        int step = 0;
        std::optional<ViewSpec> spec;
        QString error;
    };
    void adopt(StepView view);

    Session *m_session;
    std::optional<Lesson> m_lesson;
    int m_step = 0;
    int m_leftAt = 0;
    int m_trainingStepLimit = 0;
    std::optional<ViewSpec> m_stepSpec;
    QFileSystemWatcher m_watcher;
    LatestJob<StepView> m_stepJob; // last: its destructor waits for the step in progress
};

} // namespace atlas
