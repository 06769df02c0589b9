#include "panels/trainpanel.h"

#include "session/session.h"
#include "views/attentionview.h"
#include "views/heatmapplot.h"
#include "views/tensorview.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QVBoxLayout>

#include <cmath>

namespace atlas {

namespace {

QLabel *fieldLabel(const QString &text, QWidget *buddy)
{
    auto *label = new QLabel(text, buddy->parentWidget());
    label->setBuddy(buddy);
    label->setToolTip(buddy->toolTip());
    return label;
}

QPushButton *button(const QString &text, const QString &shortcut, const QString &tip, QWidget *parent)
{
    auto *b = new QPushButton(text, parent);
    b->setShortcut(QKeySequence(shortcut));
    b->setToolTip(tip + QStringLiteral(" (%1)").arg(shortcut));
    return b;
}

// Ticks for a log loss axis: the finest of 1 / 1-3 / 1-2-5 / … per decade that leaves each label room (a
// range narrower than those steps gets every other tick of a finer set).
QSharedPointer<QCPAxisTickerText> lossTicker(double low, double high, int pixels)
{
    static const std::vector<std::vector<double>> kMantissas = {{1}, {1, 3}, {1, 2, 5}, {1, 1.5, 2, 3, 4, 5, 6, 8},
        {1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9}};
    const size_t room = size_t(std::max(2, pixels / 22));
    std::vector<double> ticks;
    for (const std::vector<double> &mantissas : kMantissas) {
        std::vector<double> finer;
        for (int exponent = -5; exponent <= 3; ++exponent)
            for (double m : mantissas)
                if (const double v = m * std::pow(10.0, exponent); v >= low && v <= high)
                    finer.push_back(v);
        if (finer.size() <= room) {
            ticks = std::move(finer);
            continue;
        }
        if (ticks.size() < 2) {
            const size_t stride = (finer.size() + room - 1) / room;
            ticks.clear();
            for (size_t i = 0; i < finer.size(); i += stride)
                ticks.push_back(finer[i]);
        }
        break;
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (double v : ticks)
        ticker->addTick(v, QString::number(v, 'g', 3));
    return ticker;
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
    splitter->addWidget(createProbeArea());
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setSizes({2000, 3000});
    layout->addWidget(splitter, 1);

    const ModelConfig shape = Task::create(m_task->currentData().toString().toStdString())->modelConfig();
    updateHeadRanges(shape.layers, shape.heads);
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
        const QString summary = QString::fromStdString(Task::create(name)->summary());
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
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(3, 1);
    connect(m_task, &QComboBox::currentIndexChanged, this, [this] {
        const ModelConfig c = Task::create(m_task->currentData().toString().toStdString())->modelConfig();
        updateHeadRanges(c.layers, c.heads);
    });
    return box;
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
    const std::pair<QPushButton *, const char *> names[] = {{m_start, "trainStart"}, {m_pause, "trainPause"},
        {m_stop, "trainStop"}, {m_save, "trainSave"}, {m_explore, "trainExplore"}};
    for (const auto &[b, name] : names)
        b->setObjectName(name);
    auto *grid = new QGridLayout(box);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(m_start, 0, 0);
    grid->addWidget(m_pause, 0, 1);
    grid->addWidget(m_stop, 0, 2);
    grid->addWidget(m_save, 1, 0);
    grid->addWidget(m_explore, 1, 1, 1, 2);
    connect(m_start, &QPushButton::clicked, this, &TrainPanel::start);
    connect(m_pause, &QPushButton::clicked, this, &TrainPanel::togglePause);
    connect(m_stop, &QPushButton::clicked, this, &TrainPanel::stop);
    connect(m_explore, &QPushButton::clicked, this, &TrainPanel::openInExplorer);
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
    createLossPlot();
    layout->addWidget(m_lossPlot, 1);
    m_heldOut = new QLabel(tr("Held-out: no evaluation yet"), area);
    m_heldOut->setWordWrap(true);
    m_heldOut->setToolTip(tr("Loss and accuracy on examples the model never trains on (thick curve)"));
    layout->addWidget(m_heldOut);
    return area;
}

QWidget *TrainPanel::createProbeArea()
{
    auto *area = new QWidget(this);
    m_probe = new QLabel(tr("<b>Probe</b>: a held-out example of the task, shown once training starts"), area);
    m_probe->setWordWrap(true);
    m_probe->setTextFormat(Qt::RichText);
    m_probe->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_probe->setToolTip(tr("A held-out example, the same every run: the heat map shows the attention of the "
                           "chosen head on it, redrawn a few times a second while the model trains"));
    m_layer = new QSpinBox(area);
    m_layer->setObjectName("trainLayer");
    m_layer->setToolTip(tr("Layer whose attention the heat map shows"));
    m_head = new QSpinBox(area);
    m_head->setObjectName("trainHead");
    m_head->setToolTip(tr("Head whose attention the heat map shows"));
    m_attention = new AttentionView(area);
    m_attention->setMinimumHeight(160);
    // The view's title font suits the main window; in a dock it would be clipped.
    for (QCPLayoutElement *e : m_attention->plot()->plotLayout()->elements(false))
        if (auto *title = qobject_cast<QCPTextElement *>(e))
            title->setFont(QFont(font().family(), 10, QFont::Bold));
    m_attention->plot()->showMessage(tr("Start training to watch this head's attention form."));

    auto *grid = new QGridLayout(area);
    grid->setContentsMargins(0, 4, 0, 0);
    grid->addWidget(m_probe, 0, 0, 2, 1);
    grid->addWidget(fieldLabel(tr("&Layer"), m_layer), 0, 1);
    grid->addWidget(m_layer, 0, 2);
    grid->addWidget(fieldLabel(tr("H&ead"), m_head), 1, 1);
    grid->addWidget(m_head, 1, 2);
    grid->addWidget(m_attention, 2, 0, 1, 3);
    grid->setColumnStretch(0, 1);
    grid->setRowStretch(2, 1);
    return area;
}

void TrainPanel::createLossPlot()
{
    m_lossPlot = new QCustomPlot(this);
    m_lossPlot->setMinimumHeight(110);
    m_lossPlot->setToolTip(tr("Cross-entropy loss on a log scale: every training step (thin) and held-out "
                              "examples (thick)"));
    QCPGraph *train = m_lossPlot->addGraph();
    train->setName(tr("training step"));
    QCPGraph *heldOut = m_lossPlot->addGraph();
    heldOut->setName(tr("held-out"));
    heldOut->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
    m_lossPlot->xAxis->setLabel(tr("step"));
    m_lossPlot->yAxis->setLabel(tr("loss (nats)"));
    m_lossPlot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_lossPlot->xAxis->setRange(0, 100);
    m_lossPlot->yAxis->setRange(0.1, 10);
    m_lossPlot->yAxis->setTicker(lossTicker(0.1, 10, 100));
    m_lossPlot->installEventFilter(this); // resizing changes how many loss ticks fit
    // The legend goes in a row above the axes: inside them it would hide part of the curve.
    QCPLegend *legend = m_lossPlot->legend;
    legend->setVisible(true);
    m_lossPlot->axisRect()->insetLayout()->take(legend);
    m_lossPlot->plotLayout()->insertRow(0);
    m_lossPlot->plotLayout()->addElement(0, 0, legend);
    m_lossPlot->plotLayout()->setRowStretchFactor(0, 0.001);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setMargins(QMargins(4, 2, 4, 2));
}

void TrainPanel::connectWorker()
{
    connect(m_worker, &TrainingWorker::stateChanged, this, &TrainPanel::showState);
    connect(m_worker, &TrainingWorker::progressed, this, &TrainPanel::showProgress);
    connect(m_worker, &TrainingWorker::probeTraced, this, &TrainPanel::showProbe);
    connect(m_worker, &TrainingWorker::saved, this, &TrainPanel::onSaved);
    connect(m_worker, &TrainingWorker::errorOccurred, this, &TrainPanel::showError);
    connect(m_layer, &QSpinBox::valueChanged, this, &TrainPanel::refreshAttention);
    connect(m_head, &QSpinBox::valueChanged, this, &TrainPanel::refreshAttention);
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
    return s;
}

void TrainPanel::start()
{
    if (m_worker->running())
        return;
    const TrainingSetup setup = setupFromControls();
    for (int i = 0; i < m_lossPlot->graphCount(); ++i)
        m_lossPlot->graph(i)->data()->clear();
    m_lossPlot->xAxis->setRange(0, std::min(setup.options.steps, 100));
    m_lossMin = m_lossMax = 0;
    m_stepShown = 0;
    m_hasProbe = false;
    m_heldOut->setText(tr("Held-out: evaluating the untrained model…"));
    m_lossPlot->replot(QCustomPlot::rpQueuedReplot);
    m_worker->start(setup);
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

void TrainPanel::updateHeadRanges(int layers, int heads)
{
    m_layer->setRange(0, std::max(0, layers - 1));
    m_head->setRange(0, std::max(0, heads - 1));
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
    return tr("Task %1 · batch %2 · peak lr %3 · seed %4")
        .arg(QString::fromStdString(s.task))
        .arg(s.options.batch)
        .arg(s.options.learningRate, 0, 'g', 3)
        .arg(s.options.seed);
}

QString TrainPanel::runningText() const
{
    const StepReport &r = m_lastReport;
    return tr("Step %1 of %2 · loss %3 · lr %4 · %5k tokens/s")
        .arg(r.step)
        .arg(m_worker->setup().options.steps)
        .arg(r.loss, 0, 'f', 3)
        .arg(r.learningRate, 0, 'g', 2)
        .arg(r.tokensPerSecond / 1000, 0, 'f', 1);
}

void TrainPanel::showProgress(const TrainingProgress &progress)
{
    auto include = [this](double loss) {
        loss = std::max(loss, 1e-4);
        m_lossMin = m_lossMax > 0 ? std::min(m_lossMin, loss) : loss;
        m_lossMax = std::max(m_lossMax, loss);
    };
    QVector<double> steps, losses;
    for (const StepReport &r : progress.steps) {
        steps << r.step;
        losses << r.loss;
        include(r.loss);
    }
    m_lossPlot->graph(0)->addData(steps, losses, true);
    for (const HeldOutPoint &p : progress.heldOut) {
        const Evaluation &e = p.evaluation;
        m_lossPlot->graph(1)->addData(p.step, e.loss);
        include(e.loss);
        m_heldOut->setText(tr("Held-out at step %1: loss %2 · token accuracy %3 % · exact match %4 %")
                               .arg(p.step)
                               .arg(e.loss, 0, 'f', 3)
                               .arg(100.0 * e.tokenAccuracy, 0, 'f', 1)
                               .arg(100.0 * e.exactMatch, 0, 'f', 1));
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
    rescaleLossAxis();
    m_lossPlot->replot(QCustomPlot::rpQueuedReplot);
}

// The step axis grows with the run (a long run's first steps would be a sliver of its whole length), in
// jumps of a quarter so the curve does not creep; the loss axis spans every loss drawn.
void TrainPanel::rescaleLossAxis()
{
    const int total = m_worker->setup().options.steps;
    if (m_stepShown > m_lossPlot->xAxis->range().upper)
        m_lossPlot->xAxis->setRange(0, std::min<double>(total, std::ceil(m_stepShown * 1.25)));
    if (m_lossMax <= 0)
        return;
    const QCPRange range(m_lossMin / 1.25, m_lossMax * 1.25);
    const int pixels = m_lossPlot->axisRect()->height();
    if (range == m_lossPlot->yAxis->range() && pixels == m_tickedPixels)
        return;
    m_tickedPixels = pixels;
    m_lossPlot->yAxis->setRange(range);
    m_lossPlot->yAxis->setTicker(lossTicker(range.lower, range.upper, pixels));
}

bool TrainPanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_lossPlot && event->type() == QEvent::Resize) {
        // The axis rect takes its new size at the next layout: retick after it.
        QMetaObject::invokeMethod(
            this,
            [this] {
                m_lossPlot->replot();
                rescaleLossAxis();
                m_lossPlot->replot(QCustomPlot::rpQueuedReplot);
            },
            Qt::QueuedConnection);
    }
    return QWidget::eventFilter(watched, event);
}

void TrainPanel::showProbe(const ProbeRun &run)
{
    m_probeText = run.text;
    QString shown = run.text.toHtmlEscaped();
    shown.replace('\n', QChar(0x21B5));
    m_probe->setText(tr("<b>Probe</b> (held-out example) after step %1:<br><code>%2</code>").arg(run.step).arg(shown));
    updateHeadRanges(run.viewInput.layers, run.viewInput.heads);
    m_hasProbe = true;
    refreshAttention();
    m_attention->setInput(run.viewInput);
}

void TrainPanel::refreshAttention()
{
    if (!m_hasProbe)
        return;
    ViewSpec spec;
    spec.view = "attention";
    spec.layer = m_layer->value();
    spec.head = m_head->value();
    spec.theme = m_session->spec().theme;
    spec.colormap = m_session->spec().colormap;
    if (!(spec == m_attention->spec()))
        m_attention->setSpec(spec);
}

void TrainPanel::applyTheme()
{
    const std::string theme = m_session->spec().theme;
    if (theme != m_theme) {
        m_theme = theme;
        const bool dark = theme == "dark";
        applyPlotTheme(m_lossPlot, theme);
        m_lossPlot->graph(0)->setPen(QPen(dark ? QColor(120, 175, 255, 150) : QColor(31, 119, 180, 120), 1));
        const QColor heldOut = dark ? QColor(255, 170, 60) : QColor(214, 95, 0);
        m_lossPlot->graph(1)->setPen(QPen(heldOut, 2.5));
        m_lossPlot->graph(1)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, heldOut, heldOut, 6));
        QCPLegend *legend = m_lossPlot->legend;
        legend->setBrush(Qt::NoBrush);
        legend->setBorderPen(Qt::NoPen);
        legend->setTextColor(dark ? QColor(0xe8e8e8) : QColor(0x1d1d1f));
        legend->setFont(QFont(font().family(), 9));
        m_attention->plot()->setTheme(theme);
        m_lossPlot->replot(QCustomPlot::rpQueuedReplot);
    }
    refreshAttention();
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
    spec.text = m_probeText.toStdString();
    spec.tokens.clear();
    spec.padding.clear();
    spec.layer = m_layer->value();
    spec.head = m_head->value();
    m_session->setSpec(spec);
    m_session->openModel(directory);
}

void TrainPanel::showError(const QString &message)
{
    m_notice->setStyleSheet("color: #d93025");
    m_notice->show();
    m_notice->setText(message);
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Train"), message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace atlas
