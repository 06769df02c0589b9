#include "panels/trainpanel.h"

#include "style/theme.h"

#include "panels/losscurveplot.h"
#include "panels/trainingprobe.h"
#include "panels/trainsettings.h"
#include "session/session.h"
#include "util/error.h"

#include <QDir>
#include <QFileDialog>
#include <QGridLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
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
    m_settings = new TrainSettings(this);
    layout->addWidget(m_settings);
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

    connect(m_settings, &TrainSettings::shapeChanged, m_probe, &TrainingProbe::setShape);
    m_settings->restore();
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
    // Two columns: the dock is narrow beside the views.
    grid->addWidget(m_start, 0, 0);
    grid->addWidget(m_pause, 0, 1);
    grid->addWidget(m_stop, 1, 0);
    grid->addWidget(m_resume, 1, 1);
    grid->addWidget(m_save, 2, 0);
    grid->addWidget(m_explore, 2, 1);
    connect(m_start, &QPushButton::clicked, this, [this] {
        if (start())
            m_settings->remember();
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

bool TrainPanel::start()
{
    if (m_worker->running())
        return false;
    TrainingSetup setup;
    try {
        setup = m_settings->setup();
        trainingModelConfig(setup.run, false); // refused here, before the run's state changes
    } catch (const Error &e) {
        showError(QString::fromUtf8(e.what()));
        return false;
    }
    m_runModelText = m_settings->modelText();
    m_lossPlot->reset(0, setup.run.options.steps);
    m_stepShown = 0;
    m_probe->clear();
    m_heldOut->setText(tr("Held-out: evaluating the untrained model…"));
    m_worker->start(setup);
    return true;
}

void TrainPanel::runLessonAction(const LessonAction &action)
{
    if (m_worker->running())
        m_worker->stop();
    m_settings->showLessonRun(action);
    start();
}

void TrainPanel::resumeFrom(const QString &directory)
{
    if (m_worker->running())
        return;
    TrainingSetup setup;
    setup.resumeDirectory = directory.toStdString();
    setup.evalEvery = m_settings->evalEvery();
    m_runModelText.clear(); // the checkpoint's own model
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
    m_lossPlot->reset(step, m_worker->setup().run.options.steps);
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
    m_exploreDirectory = root + "/" + QString::fromStdString(m_worker->setup().run.task);
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
    m_settings->setVisible(!running);
    m_start->setEnabled(!running);
    m_resume->setEnabled(!running);
    m_pause->setEnabled(running);
    m_pause->setText(state == State::Paused ? tr("Resume") : tr("Pause"));
    m_pause->setShortcut(QKeySequence("Ctrl+P")); // setText replaced it with the text's (missing) mnemonic
    m_stop->setEnabled(running);
    m_save->setEnabled(state != State::Idle);
    m_explore->setEnabled(state != State::Idle);
    const int total = m_worker->setup().run.options.steps;
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
    const TrainingRun &r = m_worker->setup().run;
    QString text = tr("Task %1 · batch %2 · peak lr %3 · seed %4")
                       .arg(QString::fromStdString(r.task))
                       .arg(r.options.batch)
                       .arg(r.options.learningRate, 0, 'g', 3)
                       .arg(r.options.seed);
    if (r.options.layerDrop > 0)
        text += tr(" · LayerDrop %1").arg(double(r.options.layerDrop), 0, 'g', 2);
    if (!m_runModelText.isEmpty())
        text += tr("\nModel: %1").arg(m_runModelText);
    return text;
}

QString TrainPanel::runningText() const
{
    const StepReport &r = m_lastReport;
    return tr("Step %1 of %2 · loss %3 · lr %4 · %5k tokens/s")
        .arg(r.step)
        .arg(m_worker->setup().run.options.steps)
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
