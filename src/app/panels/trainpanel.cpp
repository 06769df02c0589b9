#include "panels/trainpanel.h"

#include "theme.h"

#include "panels/fieldlabel.h"
#include "panels/losscurveplot.h"
#include "panels/trainingprobe.h"
#include "session/session.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QVBoxLayout>

namespace atlas {

namespace {

QPushButton *button(const QString &text, const QString &shortcut, const QString &tip, QWidget *parent)
{
    auto *b = new QPushButton(text, parent);
    b->setShortcut(QKeySequence(shortcut));
    b->setToolTip(tip + QStringLiteral(" (%1)").arg(shortcut));
    return b;
}

} // namespace

TrainPanel::TrainPanel(Session *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_worker(new TrainingWorker(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    m_settingsBox = createSettings();
    layout->addWidget(m_settingsBox);
    layout->addWidget(createButtons());
    m_notice = new QLabel(this);
    m_notice->setWordWrap(true);
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notice->setToolTip(tr("The last checkpoint saved, or what went wrong"));
    m_notice->hide();
    layout->addWidget(m_notice);
    m_status = new QLabel(tr("Pick a task and press Start (Ctrl+T)."), this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    // The user may trade the curve's height for the heat map's.
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(createCurveArea());
    m_probe = new TrainingProbe(this);
    splitter->addWidget(m_probe);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setSizes({2000, 3000});
    layout->addWidget(splitter, 1);

    m_probe->setShape(Task::create(m_task->currentData().toString().toStdString())->modelConfig());
    restoreSettings();
    connectWorker();
    connect(m_session, &Session::specChanged, this, &TrainPanel::applyTheme);
    applyTheme();
    showState();
}

TrainPanel::~TrainPanel()
{
    // Stop before the widgets the worker reports to go away; the worker finishes at most the step it is in.
    m_worker->stop();
    m_worker->wait(-1);
}

QWidget *TrainPanel::createSettings()
{
    auto *box = new QWidget(this);
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
    m_steps = spin("trainSteps", 1, 1000000, defaults.steps, tr("Optimiser steps in the run"));
    m_batch = spin("trainBatch", 1, 1024, defaults.batch, tr("Examples per step; their gradients are averaged"));
    m_seed = spin("trainSeed", 0, 1 << 30, int(defaults.seed),
        tr("Seeds the initial weights and the example stream: the same seed trains the same model"));
    m_evalEvery = spin("trainEvalEvery", 1, 100000, 100,
        tr("Measure the loss on held-out examples every this many steps (thick curve)"));
    m_evalEvery->setSuffix(tr(" steps"));
    m_learningRate = new QDoubleSpinBox(box);
    m_learningRate->setObjectName("trainLearningRate");
    m_learningRate->setDecimals(5);
    m_learningRate->setRange(0.00001, 0.1);
    m_learningRate->setSingleStep(0.0005);
    m_learningRate->setValue(defaults.learningRate);
    m_learningRate->setToolTip(tr("Peak learning rate of AdamW: a linear warm-up to it, then a cosine decay to a "
                                  "tenth of it at the last step"));

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
    m_layerDrop->setRange(0.0, double(TrainOptions::kMaxLayerDrop));
    m_layerDrop->setSingleStep(0.05);
    m_layerDrop->setDecimals(2);
    m_layerDrop->setSpecialValueText(tr("off"));
    m_layerDrop->setToolTip(tr("LayerDrop (Fan et al. 2019): each example drops each block with this probability, the "
                               "stream passing through it unchanged, so that the model still works with blocks "
                               "pruned (the LayerDrop tab, lesson 20). Plain memory strategy, one stack, no "
                               "reversible blocks"));

    auto *grid = new QGridLayout(box);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(fieldLabel(tr("T&ask"), m_task), 0, 0);
    grid->addWidget(m_task, 0, 1, 1, 3);
    grid->addWidget(fieldLabel(tr("Ste&ps"), m_steps), 1, 0);
    grid->addWidget(m_steps, 1, 1);
    grid->addWidget(fieldLabel(tr("&Batch"), m_batch), 1, 2);
    grid->addWidget(m_batch, 1, 3);
    grid->addWidget(fieldLabel(tr("Lea&rning rate"), m_learningRate), 2, 0);
    grid->addWidget(m_learningRate, 2, 1);
    grid->addWidget(fieldLabel(tr("Seed"), m_seed), 2, 2);
    grid->addWidget(m_seed, 2, 3);
    grid->addWidget(fieldLabel(tr("E&valuate every"), m_evalEvery), 3, 0);
    grid->addWidget(m_evalEvery, 3, 1);
    grid->addWidget(fieldLabel(tr("&Memory"), m_memory), 3, 2);
    grid->addWidget(m_memory, 3, 3);
    grid->addWidget(fieldLabel(tr("Chec&kpoint every"), m_checkpointEvery), 4, 0);
    grid->addWidget(m_checkpointEvery, 4, 1);
    grid->addWidget(fieldLabel(tr("FFN c&hunks"), m_ffnChunks), 4, 2);
    grid->addWidget(m_ffnChunks, 4, 3);
    grid->addWidget(fieldLabel(tr("Layer&Drop"), m_layerDrop), 5, 0);
    grid->addWidget(m_layerDrop, 5, 1);
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(3, 1);
    connect(m_task, &QComboBox::currentIndexChanged, this, [this] {
        const ModelConfig c = Task::create(m_task->currentData().toString().toStdString())->modelConfig();
        m_probe->setShape(c);
        m_checkpointEvery->setMaximum(c.layers);
        allowMemoryOptions(!c.isEncoderDecoder());
        allowLayerDrop();
    });
    connect(m_memory, &QComboBox::currentIndexChanged, this, [this] {
        m_checkpointEvery->setEnabled(m_memory->currentData().toString() == QStringLiteral("checkpoint"));
        allowLayerDrop();
    });
    m_checkpointEvery->setEnabled(false);
    const ModelConfig shape = Task::create(m_task->currentData().toString().toStdString())->modelConfig();
    m_checkpointEvery->setMaximum(shape.layers);
    for (QWidget *w : std::initializer_list<QWidget *> {m_memory, m_ffnChunks})
        w->setProperty("baseToolTip", w->toolTip());
    allowMemoryOptions(!shape.isEncoderDecoder());
    allowLayerDrop();
    return box;
}

// The settings of the last run the user started (not a lesson's), kept between sessions: a run tuned in one class
// is there in the next. The task first: choosing it sets the other fields' limits.
void TrainPanel::rememberSettings() const
{
    QSettings s;
    s.beginGroup("train");
    for (const QComboBox *box : {m_task, m_memory})
        s.setValue(box->objectName(), box->currentData());
    for (const QSpinBox *spin : {m_steps, m_batch, m_seed, m_evalEvery, m_checkpointEvery, m_ffnChunks})
        s.setValue(spin->objectName(), spin->value());
    for (const QDoubleSpinBox *spin : {m_learningRate, m_layerDrop})
        s.setValue(spin->objectName(), spin->value());
}

void TrainPanel::restoreSettings()
{
    QSettings s;
    s.beginGroup("train");
    for (QComboBox *box : {m_task, m_memory})
        if (const int i = box->findData(s.value(box->objectName())); i >= 0 && box->isEnabled())
            box->setCurrentIndex(i);
    for (QSpinBox *spin : {m_steps, m_batch, m_seed, m_evalEvery, m_checkpointEvery, m_ffnChunks})
        if (spin->isEnabled()) // disabled: what the task or the strategy allows (allowMemoryOptions)
            spin->setValue(s.value(spin->objectName(), spin->value()).toInt());
    for (QDoubleSpinBox *spin : {m_learningRate, m_layerDrop})
        if (spin->isEnabled())
            spin->setValue(s.value(spin->objectName(), spin->value()).toDouble());
}

// LayerDrop trains one stack with the plain strategy (Trainer refuses the rest).
void TrainPanel::allowLayerDrop()
{
    const bool plain = m_memory->currentData().toString() == QStringLiteral("plain");
    const bool oneStack
        = !Task::create(m_task->currentData().toString().toStdString())->modelConfig().isEncoderDecoder();
    m_layerDrop->setEnabled(plain && oneStack);
    if (!m_layerDrop->isEnabled())
        m_layerDrop->setValue(0.0);
}

// An encoder-decoder trains with the plain strategy and whole feed-forward layers only (Trainer refuses the rest).
void TrainPanel::allowMemoryOptions(bool allowed)
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

QWidget *TrainPanel::createButtons()
{
    auto *box = new QWidget(this);
    m_start = button(tr("Start"), "Ctrl+T", tr("Train a new model of the task's shape from scratch"), box);
    m_pause = button(tr("Pause"), "Ctrl+P", tr("Hold training between two steps, or go on"), box);
    m_stop = button(tr("Stop"), "Ctrl+Shift+T", tr("End the run; the model keeps what it has learnt"), box);
    m_save = button(tr("Save…"), "Ctrl+S",
        tr("Write a checkpoint (model, optimiser state, position) that File ▸ Open Model Directory "
           "opens and `transformer-atlas train --resume` continues"),
        box);
    m_explore = button(tr("Open in explorer"), "Ctrl+Shift+O",
        tr("Load the model as it is now into the main window, on the probe example, so every "
           "view can inspect it"),
        box);
    m_resume = button(tr("Resume…"), "Ctrl+Shift+R",
        tr("Continue a saved checkpoint (from Save… or `transformer-atlas train`) where it stopped, with its own "
           "task and settings"),
        box);
    const std::pair<QPushButton *, const char *> names[] = {{m_start, "trainStart"}, {m_pause, "trainPause"},
        {m_stop, "trainStop"}, {m_save, "trainSave"}, {m_explore, "trainExplore"}, {m_resume, "trainResume"}};
    for (const auto &[b, name] : names)
        b->setObjectName(name);

    auto *grid = new QGridLayout(box);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(m_start, 0, 0);
    grid->addWidget(m_pause, 0, 1);
    grid->addWidget(m_stop, 0, 2);
    grid->addWidget(m_resume, 1, 0);
    grid->addWidget(m_save, 1, 1);
    grid->addWidget(m_explore, 1, 2);
    connect(m_start, &QPushButton::clicked, this, [this] {
        rememberSettings();
        start();
    });
    connect(m_pause, &QPushButton::clicked, this, &TrainPanel::togglePause);
    connect(m_stop, &QPushButton::clicked, this, &TrainPanel::stop);
    connect(m_explore, &QPushButton::clicked, this, &TrainPanel::openInExplorer);
    connect(m_resume, &QPushButton::clicked, this, &TrainPanel::chooseCheckpoint);
    connect(m_save, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Save the checkpoint into a directory (config.json, model.safetensors, …)"));
        if (!dir.isEmpty())
            saveTo(dir);
    });
    return box;
}

QWidget *TrainPanel::createCurveArea()
{
    auto *area = new QWidget(this);
    auto *layout = new QVBoxLayout(area);
    layout->setContentsMargins(0, 0, 0, 0);
    m_lossPlot = new LossCurvePlot(area);
    layout->addWidget(m_lossPlot, 1);
    m_heldOut = new QLabel(tr("Held-out: no evaluation yet"), area);
    m_heldOut->setWordWrap(true);
    m_heldOut->setToolTip(tr("Loss and accuracy on examples the model never trains on (thick curve)"));
    layout->addWidget(m_heldOut);
    return area;
}

void TrainPanel::connectWorker()
{
    connect(m_worker, &TrainingWorker::stateChanged, this, &TrainPanel::showState);
    connect(m_worker, &TrainingWorker::progressed, this, &TrainPanel::showProgress);
    connect(m_worker, &TrainingWorker::probeTraced, m_probe, &TrainingProbe::showRun);
    connect(m_worker, &TrainingWorker::saved, this, &TrainPanel::onSaved);
    connect(m_worker, &TrainingWorker::errorOccurred, this, &TrainPanel::showError);
    connect(m_worker, &TrainingWorker::resumed, this, &TrainPanel::onResumed);
}

TrainingSetup TrainPanel::setupFromControls() const
{
    TrainingSetup s;
    s.task = m_task->currentData().toString().toStdString();
    s.options.steps = m_steps->value();
    s.options.batch = m_batch->value();
    s.options.learningRate = float(m_learningRate->value());
    s.options.seed = uint64_t(m_seed->value());
    // A short run still reaches its peak learning rate: warm up over at most a tenth of it.
    s.options.warmupSteps = std::min(s.options.warmupSteps, std::max(1, s.options.steps / 10));
    s.evalEvery = m_evalEvery->value();
    s.options.memory.strategy = parseMemoryStrategy(m_memory->currentData().toString().toStdString(), "Memory");
    s.options.memory.checkpointEvery
        = s.options.memory.strategy == MemoryStrategy::Checkpoint ? m_checkpointEvery->value() : 0;
    s.options.memory.ffnChunks = m_ffnChunks->value();
    s.reversible = s.options.memory.strategy == MemoryStrategy::Reversible;
    s.options.layerDrop = float(m_layerDrop->value());
    return s;
}

void TrainPanel::start()
{
    if (m_worker->running())
        return;
    const TrainingSetup setup = setupFromControls();
    m_lossPlot->reset(0, setup.options.steps);
    m_stepShown = 0;
    m_probe->clear();
    m_heldOut->setText(tr("Held-out: evaluating the untrained model…"));
    m_worker->start(setup);
}

void TrainPanel::runLessonAction(const LessonAction &action)
{
    if (m_worker->running())
        m_worker->stop();
    const int task = m_task->findData(QString::fromStdString(action.target));
    if (task >= 0)
        m_task->setCurrentIndex(task);
    if (action.count > 0)
        m_steps->setValue(action.count);
    m_seed->setValue(int(action.seed));
    if (action.learningRate > 0)
        m_learningRate->setValue(action.learningRate);
    start();
}

void TrainPanel::resumeFrom(const QString &directory)
{
    if (m_worker->running())
        return;
    TrainingSetup setup;
    setup.resumeDirectory = directory.toStdString();
    setup.evalEvery = m_evalEvery->value();
    m_stepShown = 0;
    m_probe->clear();
    m_heldOut->setText(tr("Held-out: reading the checkpoint in %1…").arg(QDir::toNativeSeparators(directory)));
    m_worker->start(setup);
}

void TrainPanel::chooseCheckpoint()
{
    auto *dialog = new QFileDialog(this, tr("Resume training from a checkpoint directory"));
    dialog->setFileMode(QFileDialog::Directory);
    dialog->setOption(QFileDialog::ShowDirsOnly);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, &TrainPanel::resumeFrom);
    dialog->open();
}

// The worker read the checkpoint: its task, settings and step replace the panel's.
void TrainPanel::onResumed(int step)
{
    m_stepShown = step;
    m_lossPlot->reset(step, m_worker->setup().options.steps);
    showState();
}

void TrainPanel::togglePause()
{
    if (m_worker->state() == TrainingWorker::State::Paused)
        m_worker->resume();
    else if (m_worker->state() == TrainingWorker::State::Running)
        m_worker->pause();
}

void TrainPanel::stop()
{
    m_worker->stop();
}

void TrainPanel::saveTo(const QString &directory)
{
    m_worker->save(directory);
}

void TrainPanel::openInExplorer()
{
    const QString cache = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
    const QString root = (cache.isEmpty() ? QDir::tempPath() : cache) + "/trained";
    // One directory per task, replaced each time: the Session has the model in memory once opened.
    m_exploreDirectory = root + "/" + QString::fromStdString(m_worker->setup().task);
    m_worker->save(m_exploreDirectory);
}

AttentionView *TrainPanel::attentionView() const
{
    return m_probe->attentionView();
}

QString TrainPanel::probeText() const
{
    return m_probe->text();
}

QString TrainPanel::statusText() const
{
    return m_status->text();
}

QString TrainPanel::heldOutText() const
{
    return m_heldOut->text();
}

QString TrainPanel::noticeText() const
{
    return m_notice->text();
}

void TrainPanel::showState()
{
    using State = TrainingWorker::State;
    const State state = m_worker->state();
    const bool running = m_worker->running();
    // The settings cannot change during a run: their room goes to the curve and the heat map meanwhile.
    m_settingsBox->setVisible(!running);
    m_start->setEnabled(!running);
    m_resume->setEnabled(!running);
    m_pause->setEnabled(running);
    m_pause->setText(state == State::Paused ? tr("Resume") : tr("Pause"));
    m_pause->setShortcut(QKeySequence("Ctrl+P")); // setText replaced it with the text's (missing) mnemonic
    m_stop->setEnabled(running);
    m_save->setEnabled(state != State::Idle);
    m_explore->setEnabled(state != State::Idle);
    const int total = m_worker->setup().options.steps;
    QString text;
    if (state == State::Running)
        text = m_stepShown > 0 ? runningText() : tr("Starting…");
    else if (state == State::Paused)
        text = tr("Paused at step %1 of %2. Resume with Ctrl+P.").arg(m_stepShown).arg(total);
    else if (state == State::Finished)
        text = m_stepShown >= total ? tr("Finished: %1 steps.").arg(total)
                                    : tr("Stopped at step %1 of %2.").arg(m_stepShown).arg(total);
    if (state != State::Idle)
        m_status->setText(setupText() + '\n' + text);
}

// The run's settings, shown while the settings themselves are hidden.
QString TrainPanel::setupText() const
{
    const TrainingSetup &s = m_worker->setup();
    QString text = tr("Task %1 · batch %2 · peak lr %3 · seed %4")
                       .arg(QString::fromStdString(s.task))
                       .arg(s.options.batch)
                       .arg(s.options.learningRate, 0, 'g', 3)
                       .arg(s.options.seed);
    if (s.options.layerDrop > 0)
        text += tr(" · LayerDrop %1").arg(double(s.options.layerDrop), 0, 'g', 2);
    return text;
}

QString TrainPanel::runningText() const
{
    const StepReport &r = m_lastReport;
    return tr("Step %1 of %2 · loss %3 · lr %4 · %5k tokens/s")
        .arg(r.step)
        .arg(m_worker->setup().options.steps)
        .arg(formatNumber(r.loss), formatNumber(r.learningRate, 2), formatNumber(r.tokensPerSecond / 1000, 3));
}

void TrainPanel::showProgress(const TrainingProgress &progress)
{
    QVector<double> steps, losses;
    for (const StepReport &r : progress.steps) {
        steps << r.step;
        losses << r.loss;
    }
    m_lossPlot->addSteps(steps, losses);
    for (const HeldOutPoint &p : progress.heldOut) {
        const Evaluation &e = p.evaluation;
        m_lossPlot->addHeldOut(p.step, e.loss);
        m_heldOut->setText(tr("Held-out at step %1: loss %2 · token accuracy %3 · exact match %4")
                               .arg(p.step)
                               .arg(formatNumber(e.loss), formatPercent(e.tokenAccuracy), formatPercent(e.exactMatch)));
    }
    if (!progress.steps.empty()) {
        m_lastReport = progress.steps.back();
        m_lastReport.tokensPerSecond = 0; // one step's rate is noisy: show the batch's mean
        for (const StepReport &r : progress.steps)
            m_lastReport.tokensPerSecond += r.tokensPerSecond / double(progress.steps.size());
        m_stepShown = m_lastReport.step;
        if (m_worker->state() == TrainingWorker::State::Running)
            m_status->setText(setupText() + '\n' + runningText());
    }
    m_lossPlot->rescale(m_stepShown);
}

void TrainPanel::applyTheme()
{
    if (m_session->spec().theme != m_theme) {
        m_theme = m_session->spec().theme;
        m_lossPlot->applyTheme(m_theme);
    }
    m_probe->applyTheme(m_session->spec().theme, m_session->spec().colormap);
}

void TrainPanel::onSaved(const QString &directory, int step)
{
    m_notice->setStyleSheet({});
    m_notice->show();
    if (directory == m_exploreDirectory) {
        m_exploreDirectory.clear();
        m_notice->setText(tr("Opened the model after step %1 in the main window.").arg(step));
        openInSession(directory);
        return;
    }
    m_notice->setText(tr("Saved step %1 to %2").arg(step).arg(QDir::toNativeSeparators(directory)));
}

// The Session takes one job at a time: wait until it is free, then open the model on the probe example (the
// text the window showed before may be longer than the trained model's context).
void TrainPanel::openInSession(const QString &directory)
{
    if (m_session->busy()) {
        connect(
            m_session, &Session::busyChanged, this, [this, directory] { openInSession(directory); },
            Qt::SingleShotConnection);
        return;
    }
    ViewSpec spec = m_session->spec();
    const bool twoStacks = !m_probe->sourceText().isEmpty();
    spec.text = (twoStacks ? m_probe->sourceText() : m_probe->text()).toStdString();
    spec.decoderText = twoStacks ? m_probe->text().toStdString() : std::string();
    spec.tokens.clear();
    spec.padding.clear();
    spec.decoderTokens.clear();
    spec.site = m_probe->site();
    spec.layer = m_probe->layer();
    spec.head = m_probe->head();
    m_session->setSpec(spec);
    m_session->openModel(directory);
}

void TrainPanel::showError(const QString &message)
{
    m_notice->setStyleSheet(textColorStyle(warningTextColor()));
    m_notice->show();
    m_notice->setText(message);
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Train"), message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace atlas
