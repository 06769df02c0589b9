#include "panels/trainsettings.h"

#include "style/theme.h"

#include "model/model.h"
#include "panels/architecturebox.h"
#include "panels/fieldlabel.h"
#include "panels/trainingoptionfield.h"
#include "train/memorystrategy.h"
#include "train/task.h"
#include "train/trainingsetup.h"
#include "util/error.h"
#include "views/byteunits.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QSettings>
#include <QSpinBox>

#include <algorithm>
#include <cmath>

namespace atlas {

TrainSettings::TrainSettings(QWidget *parent)
    : QWidget(parent)
{
    createControls();
}

// Warm-up and weight decay: AdamW's settings besides the learning rate, as `train --warmup --weight-decay`.
void TrainSettings::createOptimiserControls()
{
    m_warmup = new QSpinBox(this);
    m_warmup->setObjectName("trainWarmup");
    setTrainingOptionRange(m_warmup, "warmup", 1);
    m_warmup->setValue(-1);
    m_warmup->setSpecialValueText(tr("auto"));
    m_warmup->setSuffix(tr(" steps"));
    m_warmup->setToolTip(m_warmup->toolTip()
        + tr(". Auto: %1, or a tenth of a shorter run, so that it still reaches its peak")
              .arg(TrainOptions {}.warmupSteps));
    m_weightDecay = new QDoubleSpinBox(this);
    m_weightDecay->setObjectName("trainWeightDecay");
    setTrainingOptionRange(m_weightDecay, "weight-decay", 3);
    m_weightDecay->setSingleStep(0.01);
    m_weightDecay->setValue(TrainOptions {}.weightDecay);
}

void TrainSettings::createControls()
{
    QWidget *box = this;
    m_task = new QComboBox(box);
    m_task->setObjectName("trainTask");
    QStringList tips;
    for (const std::string &name : Task::names()) {
        const std::unique_ptr<Task> task = Task::create(name);
        const QString summary = QString::fromStdString(task->summary());
        m_task->addItem(QString::fromStdString(name), QString::fromStdString(name));
        m_task->setItemData(m_task->count() - 1, summary, Qt::ToolTipRole);
        tips << QStringLiteral("%1: %2").arg(QString::fromStdString(name), summary);
    }
    m_task->setToolTip(tr("What the model learns:\n") + tips.join('\n'));
    const TrainOptions defaults;
    auto spin = [box](const char *name, int low, int high, int value, const QString &tip) {
        auto *s = new QSpinBox(box);
        s->setObjectName(name);
        s->setRange(low, high);
        s->setValue(value);
        s->setToolTip(tip);
        return s;
    };
    // A field of the run's option `key`: its range and tooltip from the option table.
    auto optionSpin = [box](const char *name, const std::string &key, int value) {
        auto *s = new QSpinBox(box);
        s->setObjectName(name);
        setTrainingOptionRange(s, key);
        s->setValue(value);
        return s;
    };
    m_steps = optionSpin("trainSteps", "steps", defaults.steps);
    m_batch = optionSpin("trainBatch", "batch", defaults.batch);
    m_seed = optionSpin("trainSeed", "seed", int(defaults.seed));
    m_evalEvery = spin("trainEvalEvery", 1, 100000, 100,
        tr("Measure the loss on held-out examples every this many steps (thick curve)"));
    m_evalEvery->setSuffix(tr(" steps"));
    m_learningRate = new QDoubleSpinBox(box);
    m_learningRate->setObjectName("trainLearningRate");
    setTrainingOptionRange(m_learningRate, "lr", 5);
    m_learningRate->setSingleStep(0.0005);
    m_learningRate->setValue(defaults.learningRate);
    createOptimiserControls();

    m_memory = new QComboBox(box);
    m_memory->setObjectName("trainMemory");
    m_memory->addItem(tr("plain"), "plain");
    m_memory->addItem(tr("checkpoint"), "checkpoint");
    m_memory->addItem(tr("reversible"), "reversible");
    m_memory->setToolTip(tr("What each step keeps for its backward pass (docs/models.md, Memory strategies):\n"
                            "plain: every activation;\n"
                            "checkpoint: every ⌈√L⌉-th layer's input, recomputing the rest (the same gradients);\n"
                            "reversible: nothing, rebuilding each layer's input from its output (the new model "
                            "gets reversible blocks)"));

    m_checkpointEvery = spin("trainCheckpointEvery", 0, 64, 0,
        tr("Checkpointing keeps every k-th block's input and recomputes the blocks between during the backward pass "
           "(the same gradients); the default, ⌈√L⌉, keeps O(√L) of them"));
    m_checkpointEvery->setSpecialValueText(tr("⌈√L⌉"));
    m_checkpointEvery->setPrefix(tr("k = "));
    m_ffnChunks = spin("trainFfnChunks", 1, 64, 1,
        tr("Run the feed-forward sub-layers over the sequence in this many chunks of rows (Reformer), so the "
           "d_ff-wide intermediate never exists whole; at most the example's length"));

    m_layerDrop = new QDoubleSpinBox(box);
    m_layerDrop->setObjectName("trainLayerDrop");
    setTrainingOptionRange(m_layerDrop, "layerdrop", 2);
    m_layerDrop->setSingleStep(0.05);
    m_layerDrop->setSpecialValueText(tr("off"));
    m_layerDrop->setToolTip(m_layerDrop->toolTip() + tr(". Plain memory strategy, one stack, no reversible blocks"));

    m_architecture = new ArchitectureBox(box);
    m_modelProblem = new QLabel(box);
    m_modelSummary = new QLabel(box);
    layOut();
    connect(m_task, &QComboBox::currentIndexChanged, this, [this] {
        const std::unique_ptr<Task> task = Task::create(m_task->currentData().toString().toStdString());
        const ModelConfig c = task->modelConfig();
        m_architecture->setTaskShape(c, task->takesContext());
        m_architecture->setStartingModels(startingModels(*task));
        allowMemoryOptions(!c.isEncoderDecoder());
        allowLayerDrop();
        showShape();
    });
    // The summary's memory follows the strategy too (reversible blocks also change the model).
    connect(m_architecture, &ArchitectureBox::changed, this, &TrainSettings::showShape);
    // Starting from a model, the learning rate left at a new run's default becomes fine-tuning's, and back.
    connect(m_architecture, &ArchitectureBox::changed, this, [this] {
        const bool fineTuning = !m_architecture->startingModel().isEmpty();
        const double from = fineTuning ? TrainOptions {}.learningRate : TrainOptions::kFineTuningLearningRate,
                     to = fineTuning ? TrainOptions::kFineTuningLearningRate : TrainOptions {}.learningRate;
        if (std::abs(m_learningRate->value() - from) < 1e-9)
            m_learningRate->setValue(to);
    });
    connect(m_memory, &QComboBox::currentIndexChanged, this, [this] {
        m_checkpointEvery->setEnabled(m_memory->currentData().toString() == QStringLiteral("checkpoint"));
        allowLayerDrop();
        showShape();
    });
    for (QSpinBox *spin : {m_checkpointEvery, m_ffnChunks})
        connect(spin, &QSpinBox::valueChanged, this, &TrainSettings::showShape);
    m_checkpointEvery->setEnabled(false);
    const std::unique_ptr<Task> task = Task::create(m_task->currentData().toString().toStdString());
    const ModelConfig shape = task->modelConfig();
    m_architecture->setTaskShape(shape, task->takesContext());
    m_architecture->setStartingModels(startingModels(*task));
    for (QWidget *w : std::initializer_list<QWidget *> {m_memory, m_ffnChunks})
        w->setProperty("baseToolTip", w->toolTip());
    allowMemoryOptions(!shape.isEncoderDecoder());
    allowLayerDrop();
}

// Label and field in two columns: the dock is narrow beside the views.
void TrainSettings::layOut()
{
    auto *grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    int row = 0;
    for (const auto &[label, field] :
        std::initializer_list<std::pair<QString, QWidget *>> {{tr("T&ask"), m_task}, {tr("Ste&ps"), m_steps},
            {tr("&Batch"), m_batch}, {tr("Lea&rning rate"), m_learningRate}, {tr("&Warm-up"), m_warmup},
            {tr("Weight decay"), m_weightDecay}, {tr("Seed"), m_seed}, {tr("E&valuate every"), m_evalEvery},
            {tr("&Memory"), m_memory}, {tr("Chec&kpoint every"), m_checkpointEvery}, {tr("FFN c&hunks"), m_ffnChunks},
            {tr("Layer&Drop"), m_layerDrop}}) {
        grid->addWidget(fieldLabel(label, field), row, 0);
        allowNarrow(field);
        grid->addWidget(field, row++, 1);
    }
    // Above the Model section, in sight with its header rather than below its last field.
    m_modelProblem->setObjectName("trainModelProblem");
    m_modelProblem->setWordWrap(true);
    m_modelProblem->setStyleSheet(textColorStyle(warningTextColor()));
    m_modelProblem->setToolTip(tr("Start would refuse this model: change the task or the Model section"));
    m_modelProblem->hide();
    grid->addWidget(m_modelProblem, row++, 0, 1, 2);
    m_modelSummary->setObjectName("trainModelSummary");
    m_modelSummary->setWordWrap(true);
    m_modelSummary->setToolTip(tr("The model a run of these settings trains, and what one training step holds in "
                                  "memory: the weights, their gradients, AdamW's two moments and one example's "
                                  "activations (a textbook count, as `train` checks it)"));
    grid->addWidget(m_modelSummary, row++, 0, 1, 2);
    grid->addWidget(m_architecture, row, 0, 1, 2);
    grid->setColumnStretch(1, 1);
    grid->setColumnMinimumWidth(0, trainFormLabelWidth(this));
}

// The settings of the last run the user started (not a lesson's), kept between sessions: a run tuned in one class
// is there in the next. The task first: choosing it sets the other fields' limits.
void TrainSettings::remember() const
{
    QSettings s;
    s.beginGroup("train");
    for (const QComboBox *box : {m_task, m_memory})
        s.setValue(box->objectName(), box->currentData());
    for (const QSpinBox *spin : {m_steps, m_batch, m_seed, m_evalEvery, m_checkpointEvery, m_ffnChunks, m_warmup})
        s.setValue(spin->objectName(), spin->value());
    for (const QDoubleSpinBox *spin : {m_learningRate, m_layerDrop, m_weightDecay})
        s.setValue(spin->objectName(), spin->value());
    s.setValue("model", ArchitectureBox::optionsText(m_architecture->options()));
    s.setValue("modelExpanded", m_architecture->expanded());
}

void TrainSettings::restore()
{
    QSettings s;
    s.beginGroup("train");
    for (QComboBox *box : {m_task, m_memory})
        if (const int i = box->findData(s.value(box->objectName())); i >= 0 && box->isEnabled())
            box->setCurrentIndex(i);
    // The model before the fields: starting from a model changes the learning rate the fields then set.
    m_architecture->setOptions(ArchitectureBox::parseOptionsText(s.value("model").toString()));
    for (QSpinBox *spin : {m_steps, m_batch, m_seed, m_evalEvery, m_checkpointEvery, m_ffnChunks, m_warmup})
        if (spin->isEnabled()) // disabled: what the task or the strategy allows (allowMemoryOptions)
            spin->setValue(s.value(spin->objectName(), spin->value()).toInt());
    for (QDoubleSpinBox *spin : {m_learningRate, m_layerDrop, m_weightDecay})
        if (spin->isEnabled())
            spin->setValue(s.value(spin->objectName(), spin->value()).toDouble());
    m_architecture->setExpanded(s.value("modelExpanded", false).toBool());
    showShape();
}

// LayerDrop trains one stack with the plain strategy (Trainer refuses the rest).
void TrainSettings::allowLayerDrop()
{
    const bool plain = m_memory->currentData().toString() == QStringLiteral("plain");
    const bool oneStack
        = !Task::create(m_task->currentData().toString().toStdString())->modelConfig().isEncoderDecoder();
    m_layerDrop->setEnabled(plain && oneStack);
    if (!m_layerDrop->isEnabled())
        m_layerDrop->setValue(0.0);
}

// An encoder-decoder trains with the plain strategy and whole feed-forward layers only (Trainer refuses the rest).
void TrainSettings::allowMemoryOptions(bool allowed)
{
    if (!allowed) {
        m_memory->setCurrentIndex(m_memory->findData("plain"));
        m_ffnChunks->setValue(1);
    }
    const QString why
        = allowed ? QString() : tr("\nAn encoder-decoder trains with the plain strategy and whole layers.");
    for (QWidget *w : std::initializer_list<QWidget *> {m_memory, m_ffnChunks}) {
        w->setEnabled(allowed);
        w->setToolTip(w->property("baseToolTip").toString() + why);
    }
}

// Throws atlas::Error for a model option the run cannot take (a funnel's groups that do not parse).
TrainingSetup TrainSettings::setup() const
{
    TrainingSetup s;
    TrainingRun &run = s.run;
    run.task = m_task->currentData().toString().toStdString();
    TrainOptions &o = run.options;
    o.steps = m_steps->value();
    o.batch = m_batch->value();
    o.learningRate = float(m_learningRate->value());
    o.seed = uint64_t(m_seed->value());
    // Auto: a short run still reaches its peak learning rate, warming up over at most a tenth of it.
    o.warmupSteps = m_warmup->value() >= 0 ? m_warmup->value() : std::min(o.warmupSteps, std::max(1, o.steps / 10));
    o.weightDecay = float(m_weightDecay->value());
    s.evalEvery = m_evalEvery->value();
    o.memory.strategy = parseMemoryStrategy(m_memory->currentData().toString().toStdString(), "Memory");
    o.memory.checkpointEvery = o.memory.strategy == MemoryStrategy::Checkpoint ? m_checkpointEvery->value() : 0;
    o.memory.ffnChunks = m_ffnChunks->value();
    run.reversible = o.memory.strategy == MemoryStrategy::Reversible;
    o.layerDrop = float(m_layerDrop->value());
    for (const auto &[key, value] : m_architecture->options())
        setTrainingRunOption(run, key, value, "Model: " + key);
    return s;
}

// The model the settings describe: its size and a step's memory above the Model section, or why Start would refuse
// it; the probe's layer and head ranges and checkpointing's k follow it.
void TrainSettings::showShape()
{
    ModelConfig shape = Task::create(m_task->currentData().toString().toStdString())->modelConfig();
    QString problem, summary;
    try {
        const TrainingRun run = setup().run;
        shape = trainingModelConfig(run, false);
        summary = tr("%1 layers × %2 heads, d_model %3 · %4 parameters · a step holds about %5")
                      .arg(shape.layers)
                      .arg(shape.heads)
                      .arg(shape.dModel)
                      .arg(QLocale().toString(qlonglong(Model::parameterCountOf(shape))))
                      .arg(byteAmount(estimatedTrainingBatchBytes(
                          shape, shape.context, run.options.batch, run.options.memory, shape.context)));
    } catch (const Error &e) {
        problem = QString::fromUtf8(e.what());
    }
    m_checkpointEvery->setMaximum(shape.layers);
    m_modelSummary->setText(summary);
    m_modelSummary->setVisible(problem.isEmpty());
    m_modelProblem->setText(problem);
    m_modelProblem->setVisible(!problem.isEmpty());
    emit shapeChanged(shape);
}

void TrainSettings::showLessonRun(const LessonAction &action)
{
    const TrainingRun run = lessonTrainingRun(action);
    if (const int task = m_task->findData(QString::fromStdString(run.task)); task >= 0)
        m_task->setCurrentIndex(task);
    m_architecture->setOptions(action.trainOptions); // the lesson's model, not the one last tried; before the rate
    m_steps->setValue(run.options.steps);
    m_batch->setValue(run.options.batch);
    m_seed->setValue(int(run.options.seed));
    m_learningRate->setValue(run.options.learningRate);
    m_layerDrop->setValue(run.options.layerDrop);
    const bool warmup = std::any_of(action.trainOptions.begin(), action.trainOptions.end(),
        [](const auto &option) { return option.first == "warmup"; });
    m_warmup->setValue(warmup ? run.options.warmupSteps : -1); // auto unless the lesson gives it
    m_weightDecay->setValue(run.options.weightDecay);
    if (run.reversible) // the panel's reversible blocks come with the reversible strategy
        m_memory->setCurrentIndex(m_memory->findData(QStringLiteral("reversible")));
}

int TrainSettings::evalEvery() const
{
    return m_evalEvery->value();
}

QString TrainSettings::modelText() const
{
    return ArchitectureBox::optionsText(m_architecture->options());
}

} // namespace atlas
