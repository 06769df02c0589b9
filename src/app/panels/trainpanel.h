#pragma once

#include "lesson/lesson.h"
#include "session/trainingworker.h"

#include <QWidget>

#include <string>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace atlas {

class AttentionView;
class LossCurvePlot;
class Session;
class TrainingProbe;

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

    void start();
    // A lesson's train action: its task, steps, seed and learning rate (when given) in the controls, then start().
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
    QWidget *createSettings();
    QWidget *createButtons();
    QWidget *createCurveArea();
    void connectWorker();
    void allowMemoryOptions(bool allowed);
    void allowLayerDrop();
    void rememberSettings() const;
    void restoreSettings();
    TrainingSetup setupFromControls() const;
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
    QComboBox *m_task = nullptr;
    QComboBox *m_memory = nullptr; // the memory strategy: plain, checkpoint, reversible (a reversible model)
    QSpinBox *m_checkpointEvery = nullptr; // checkpointing's k; 0 = ⌈√L⌉
    QSpinBox *m_ffnChunks = nullptr; // the feed-forward sub-layers in this many chunks of rows
    QDoubleSpinBox *m_layerDrop = nullptr; // LayerDrop's rate: each example drops each block with this probability
    QSpinBox *m_steps = nullptr;
    QSpinBox *m_batch = nullptr;
    QDoubleSpinBox *m_learningRate = nullptr;
    QSpinBox *m_seed = nullptr;
    QSpinBox *m_evalEvery = nullptr;
    QWidget *m_settingsBox = nullptr; // hidden while a run is going
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
    std::string m_theme;
};

} // namespace atlas
