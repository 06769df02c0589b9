#include "session/trainingworker.h"

#include "model/modeltokenizer.h"
#include "util/error.h"

#include "engine/engine.h"
#include "tokenize/tokenizer.h"
#include "train/trainingsetup.h"
#include "util/threadpriority.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

namespace atlas {

TrainingWorker::TrainingWorker(QObject *parent)
    : QObject(parent)
{
}

TrainingWorker::~TrainingWorker()
{
    stop();
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
    m_saveJobs.waitForFinished();
}

void TrainingWorker::start(const TrainingSetup &setup)
{
    if (running())
        return;
    if (m_thread) { // the previous run's thread has ended (running() is false) or is just returning
        m_thread->wait();
        delete m_thread;
        m_thread = nullptr;
    }
    {
        const std::lock_guard lock(m_mutex);
        m_trainer.reset();
        m_saveQueue.clear();
        m_loopAlive = true;
        m_pauseRequested = false;
        m_stopRequested = false;
    }
    m_setup = setup;
    m_stepsDone = 0;
    m_thread = QThread::create([this, setup] {
        runAtBackgroundPriority();
        run(setup);
    });
    m_thread->setObjectName("training");
    connect(m_thread, &QThread::finished, this, &TrainingWorker::onThreadFinished);
    setState(State::Running);
    m_thread->start();
}

void TrainingWorker::pause()
{
    const std::lock_guard lock(m_mutex);
    m_pauseRequested = true;
}

void TrainingWorker::resume()
{
    {
        const std::lock_guard lock(m_mutex);
        m_pauseRequested = false;
    }
    m_wake.notify_all();
}

void TrainingWorker::stop()
{
    {
        const std::lock_guard lock(m_mutex);
        m_stopRequested = true;
    }
    m_wake.notify_all();
}

void TrainingWorker::save(const QString &directory)
{
    std::shared_ptr<const Trainer> trainer;
    {
        const std::lock_guard lock(m_mutex);
        if (m_loopAlive) {
            m_saveQueue.push_back(directory);
            m_wake.notify_all();
            return;
        }
        trainer = m_trainer;
    }
    if (!trainer) {
        emit errorOccurred(tr("Nothing to save yet: start training first."));
        return;
    }
    m_saveJobs.addFuture(QtConcurrent::run([this, trainer, directory] { saveNow(*trainer, directory); }));
}

bool TrainingWorker::wait(int milliseconds)
{
    return !m_thread || m_thread->wait(QDeadlineTimer(milliseconds));
}

bool TrainingWorker::hasTrainer() const
{
    const std::lock_guard lock(m_mutex);
    return m_trainer != nullptr;
}

Example TrainingWorker::probeExample(const Task &task, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    return task.sample(rng, true);
}

void TrainingWorker::run(const TrainingSetup &setup)
{
    std::shared_ptr<Trainer> trainer;
    try {
        TrainingSetup effective = setup;
        if (setup.resumeDirectory.empty()) {
            trainer = newTrainer(setup.run);
        } else {
            trainer = Trainer::resume(setup.resumeDirectory);
            if (trainer->stepCount() >= trainer->options().steps)
                throw Error(setup.resumeDirectory + ": the checkpoint has already trained all its "
                    + std::to_string(trainer->options().steps) + " steps");
            effective.run.task = trainer->task().name();
            effective.run.options = trainer->options();
            const int step = trainer->stepCount();
            m_stepsDone = step;
            post([this, effective, step] {
                m_setup = effective;
                emit resumed(step);
            });
        }
        {
            const std::lock_guard lock(m_mutex);
            m_trainer = trainer;
        }
        train(*trainer, effective);
    } catch (const std::exception &e) { // atlas::Error (bad options, a bad checkpoint), std::bad_alloc
        const QString message = QString::fromStdString(e.what());
        post([this, message] { emit errorOccurred(message); });
    }
    finishLoop(trainer.get());
}

void TrainingWorker::train(Trainer &trainer, const TrainingSetup &setup)
{
    const Example probe = probeExample(trainer.task(), setup.probeSeed);
    const int total = setup.run.options.steps;
    const int evalEvery = std::max(1, setup.evalEvery);
    TrainingProgress pending;
    pending.heldOut.push_back({trainer.stepCount(), trainer.evaluate(setup.evalExamples)});
    runProbe(trainer, probe);
    QElapsedTimer sinceReport, sinceProbe;
    sinceReport.start();
    sinceProbe.start();
    int probedAt = 0;
    while (trainer.stepCount() < total && betweenSteps(trainer, pending)) {
        pending.steps.push_back(trainer.step());
        const int step = trainer.stepCount();
        m_stepsDone = step;
        if (step % evalEvery == 0 || step == total)
            pending.heldOut.push_back({step, trainer.evaluate(setup.evalExamples)});
        if (sinceReport.elapsed() >= kReportIntervalMs) {
            flush(pending);
            sinceReport.restart();
        }
        if (sinceProbe.elapsed() >= kProbeIntervalMs) {
            runProbe(trainer, probe);
            probedAt = step;
            sinceProbe.restart();
        }
    }
    flush(pending);
    if (probedAt != trainer.stepCount())
        runProbe(trainer, probe); // the attention where training ended
}

// Between two steps: runs the requested saves, then waits while paused. Returns false when asked to stop.
bool TrainingWorker::betweenSteps(Trainer &trainer, TrainingProgress &pending)
{
    std::unique_lock lock(m_mutex);
    bool paused = false;
    for (;;) {
        if (!m_saveQueue.empty()) {
            const QString directory = m_saveQueue.front();
            m_saveQueue.erase(m_saveQueue.begin());
            lock.unlock();
            saveNow(trainer, directory);
            lock.lock();
        } else if (m_stopRequested || !m_pauseRequested) {
            break;
        } else if (!paused) {
            // Report every step done before saying "paused", so the GUI shows the step the pause holds at.
            lock.unlock();
            flush(pending);
            post([this] { setState(State::Paused); });
            lock.lock();
            paused = true;
        } else {
            m_wake.wait(lock);
        }
    }
    const bool stop = m_stopRequested;
    lock.unlock();
    if (paused && !stop)
        post([this] { setState(State::Running); });
    return !stop;
}

// Saves still queued are written before the run ends; later ones go to a pool thread (save()).
void TrainingWorker::finishLoop(Trainer *trainer)
{
    std::unique_lock lock(m_mutex);
    while (!m_saveQueue.empty()) {
        const QString directory = m_saveQueue.front();
        m_saveQueue.erase(m_saveQueue.begin());
        lock.unlock();
        if (trainer)
            saveNow(*trainer, directory);
        lock.lock();
    }
    m_loopAlive = false;
}

void TrainingWorker::saveNow(const Trainer &trainer, const QString &directory)
{
    const int step = trainer.stepCount();
    const std::lock_guard saving(m_saveMutex);
    try {
        trainer.save(directory.toStdString());
        post([this, directory, step] { emit saved(directory, step); });
    } catch (const std::exception &e) {
        const QString message = tr("Saving the checkpoint failed: %1").arg(QString::fromStdString(e.what()));
        post([this, message] { emit errorOccurred(message); });
    }
}

void TrainingWorker::runProbe(const Trainer &trainer, const Example &probe)
{
    const std::shared_ptr<const Model> model = trainer.snapshot();
    const Input input = inputOf(probe);
    Engine engine(model, input);
    engine.runToEnd();
    ProbeRun run;
    run.step = trainer.stepCount();
    const std::unique_ptr<Tokenizer> tokenizer = tokenizerForModel(*model);
    run.text = QString::fromStdString(tokenizer->decode(probe.tokens));
    if (!probe.source.empty())
        run.sourceText = QString::fromStdString(tokenizer->decode(probe.source));
    run.input = input;
    auto program = std::make_shared<const Program>(engine.program());
    run.trace = std::make_shared<const Trace>(std::move(engine.trace()));
    run.viewInput = makeViewInput(model, input, program, run.trace);
    post([this, run] { emit probeTraced(run); });
}

void TrainingWorker::flush(TrainingProgress &pending)
{
    if (pending.steps.empty() && pending.heldOut.empty())
        return;
    post([this, progress = std::move(pending)] { emit progressed(progress); });
    pending = {};
}

// Runs `onGuiThread` on this object's thread; dropped if the object is destroyed first.
void TrainingWorker::post(std::function<void()> onGuiThread)
{
    QMetaObject::invokeMethod(this, std::move(onGuiThread), Qt::QueuedConnection);
}

void TrainingWorker::setState(State state)
{
    if (state == m_state)
        return;
    m_state = state;
    emit stateChanged(state);
}

void TrainingWorker::onThreadFinished()
{
    setState(State::Finished); // after every event the worker posted: they were queued before this one
}

} // namespace atlas
