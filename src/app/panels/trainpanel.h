#pragma once

#include "lesson/lesson.h"
#include "session/trainingworker.h"

#include <QWidget>

#include <string>

class QLabel;
class QPushButton;

namespace atlas {

class AttentionView;
class LossCurvePlot;
class Session;
class TrainingProbe;
class TrainSettings;

// Train a small model on an algorithmic task and watch it learn: the settings, Start / Pause / Stop, a live
// loss curve (every step thin, held-out evaluations thick) and one head's attention on a fixed held-out
// example as the weights change. "Open in explorer" loads the model into the Session, so every view of the
// window can inspect it. The training runs in a TrainingWorker; this widget only draws what it reports.
class TrainPanel : public QWidget
{
    Q_OBJECT

public:
    explicit TrainPanel(Session *session, QWidget *parent = nullptr);
    ~TrainPanel() override;

    // Starts a run of the settings; false when one is going, or when the settings describe a model the run cannot
    // have (said in a message box).
    bool start();
    // A lesson's train action: its task, steps, seed, learning rate and model in the controls, then start().
    void runLessonAction(const LessonAction &action);
    // Continues the checkpoint in `directory` (Trainer::resume) with its own task and settings; errors are
    // reported like any other.
    void resumeFrom(const QString &directory);
    void togglePause();
    void stop();
    // Writes a checkpoint into `directory` (between two steps while training runs).
    void saveTo(const QString &directory);
    // Saves the model to the app's cache directory and opens it in the Session, on the probe example.
    void openInExplorer();

    TrainingWorker *worker() const { return m_worker; }
    LossCurvePlot *lossPlot() const { return m_lossPlot; }
    AttentionView *attentionView() const;
    int stepShown() const { return m_stepShown; } // the last step drawn on the loss curve
    QString statusText() const;
    QString heldOutText() const;
    QString noticeText() const; // the last save or error
    QString probeText() const; // the probe example (an encoder-decoder's decoder input)

    QSize sizeHint() const override { return {400, 820}; }

private:
    QWidget *createButtons();
    QWidget *createCurveArea();
    void connectWorker();
    void showState();
    QString runningText() const;
    QString setupText() const;
    void showProgress(const TrainingProgress &progress);
    void chooseCheckpoint();
    void onResumed(int step);
    void applyTheme();
    void onSaved(const QString &directory, int step);
    void openInSession(const QString &directory);
    void showError(const QString &message);

    Session *m_session;
    TrainingWorker *m_worker;
    TrainSettings *m_settings = nullptr; // hidden while a run is going
    QPushButton *m_start = nullptr;
    QPushButton *m_pause = nullptr;
    QPushButton *m_stop = nullptr;
    QPushButton *m_save = nullptr;
    QPushButton *m_explore = nullptr;
    QPushButton *m_resume = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_notice = nullptr;
    LossCurvePlot *m_lossPlot = nullptr;
    QLabel *m_heldOut = nullptr;
    TrainingProbe *m_probe = nullptr;

    int m_stepShown = 0;
    StepReport m_lastReport;
    QString m_exploreDirectory; // the checkpoint "Open in explorer" waits for
    QString m_runModelText; // the run's model options, "positions=alibi experts=4" (empty: the task's, or resumed)
    std::string m_theme;
};

} // namespace atlas
