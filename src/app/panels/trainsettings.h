#pragma once

#include "lesson/lesson.h"
#include "model/modelconfig.h"
#include "session/trainingworker.h"

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace atlas {

class ArchitectureBox;

// The Train panel's settings for a new run: the task, the optimiser's and memory's settings, and the Model section
// (ArchitectureBox). Label and field in two columns, as the dock is narrow beside the views. They are kept between
// sessions (remember, restore): a run tuned in one class is there in the next.
class TrainSettings : public QWidget
{
    Q_OBJECT

public:
    explicit TrainSettings(QWidget *parent = nullptr);

    // The run the controls describe; throws atlas::Error for a model option it cannot take.
    TrainingSetup setup() const;
    // A lesson's train action in the controls: its task, steps, seed, learning rate and model; LayerDrop off.
    void showLessonRun(const LessonAction &action);
    int evalEvery() const;
    QString modelText() const; // the Model section's options, "positions=alibi experts=4"; empty: the task's own
    void remember() const;
    void restore();

signals:
    // The model the settings describe (the task's when they describe none it can have): the probe's ranges follow.
    void shapeChanged(const atlas::ModelConfig &shape);

private:
    void createControls();
    void createOptimiserControls();
    void layOut();
    void showShape();
    void allowMemoryOptions(bool allowed);
    void allowLayerDrop();

    QComboBox *m_task = nullptr;
    QComboBox *m_memory = nullptr; // the memory strategy: plain, checkpoint, reversible (a reversible model)
    QSpinBox *m_checkpointEvery = nullptr; // checkpointing's k; 0 = ⌈√L⌉
    QSpinBox *m_ffnChunks = nullptr; // the feed-forward sub-layers in this many chunks of rows
    QDoubleSpinBox *m_layerDrop = nullptr; // LayerDrop's rate: each example drops each block with this probability
    QSpinBox *m_steps = nullptr;
    QSpinBox *m_batch = nullptr;
    QDoubleSpinBox *m_learningRate = nullptr;
    QSpinBox *m_warmup = nullptr; // −1: auto
    QDoubleSpinBox *m_weightDecay = nullptr;
    QSpinBox *m_seed = nullptr;
    QSpinBox *m_evalEvery = nullptr;
    ArchitectureBox *m_architecture = nullptr; // the task's model, changed as `train`'s options change it
    QLabel *m_modelProblem = nullptr; // why Start would refuse the model the settings describe
    QLabel *m_modelSummary = nullptr; // else its shape, parameters and a step's memory
};

} // namespace atlas
