#pragma once

#include "engine/input.h"
#include "train/trainingsetup.h"
#include "viewmodel/viewinput.h"

#include <QFutureSynchronizer>
#include <QObject>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

class QThread;

namespace atlas {

// What a training run starts from: a fresh model (newTrainer: the task's shape with the run's changes, initialised
// from run.options.seed), or the checkpoint in resumeDirectory (whose own task and options then replace run's).
struct TrainingSetup
{
    std::string resumeDirectory;
    TrainingRun run; // run.options.memory: the memory strategy of every step
    int evalEvery = 100; // held-out evaluation every this many steps, before the first and after the last
    int evalExamples = 128; // the same held-out examples each time (Trainer::evaluate's fixed seed)
    uint64_t probeSeed = 7; // picks the held-out example the attention probe runs on
};

struct HeldOutPoint
{
    int step = 0;
    Evaluation evaluation;
};

// Everything since the previous report: the worker batches steps so the GUI gets at most ~10 reports a second.
struct TrainingProgress
{
    std::vector<StepReport> steps;
    std::vector<HeldOutPoint> heldOut;
};

// The probe example run through a snapshot of the model being trained.
struct ProbeRun
{
    int step = 0;
    QString text; // the example as text, "abcd>dcba" (an encoder-decoder's decoder input, ">abcd.")
    QString sourceText; // an encoder-decoder's source, "dcba"; empty for one stack
    Input input;
    std::shared_ptr<const Trace> trace;
    ViewInput viewInput;
};

// Trains a model on a worker thread that owns the Trainer (each step uses both cores through parallelFor).
// The object lives on the GUI thread: its signals are emitted there, from events the worker posts, and its
// methods only set flags the worker reads between two steps. Destroying it stops the run and waits for the
// step in progress.
class TrainingWorker : public QObject
{
    Q_OBJECT

public:
    enum class State { Idle, Running, Paused, Finished };
    Q_ENUM(State)

    static constexpr int kReportIntervalMs = 100;
    static constexpr int kProbeIntervalMs = 300;

    explicit TrainingWorker(QObject *parent = nullptr);
    ~TrainingWorker() override;

    // Starts a new run, dropping the previous trainer; ignored while a run is going.
    void start(const TrainingSetup &setup);
    void pause();
    void resume();
    void stop();
    // Writes a checkpoint (Trainer::save) between two steps, or at once on a pool thread when no run is going.
    // saved() or errorOccurred() follows.
    void save(const QString &directory);
    // Waits until the worker thread has ended (after stop() or the last step); false on timeout.
    bool wait(int milliseconds);

    State state() const { return m_state; }
    bool running() const { return m_state == State::Running || m_state == State::Paused; }
    bool hasTrainer() const;
    int stepsDone() const { return m_stepsDone.load(); } // as the worker sees it, not yet reported perhaps
    const TrainingSetup &setup() const { return m_setup; }

    // The probe: a held-out example of the task drawn with a fixed seed, so every run shows the same one.
    static Example probeExample(const Task &task, uint64_t seed);

signals:
    void stateChanged(atlas::TrainingWorker::State state);
    void progressed(const atlas::TrainingProgress &progress);
    void probeTraced(const atlas::ProbeRun &run);
    void saved(const QString &directory, int step);
    void errorOccurred(const QString &message);
    // A resumed run read its checkpoint: setup() now holds the checkpoint's task and options.
    void resumed(int step);

private:
    void run(const TrainingSetup &setup); // the worker thread
    void train(Trainer &trainer, const TrainingSetup &setup);
    bool betweenSteps(Trainer &trainer, TrainingProgress &pending);
    void finishLoop(Trainer *trainer);
    void saveNow(const Trainer &trainer, const QString &directory);
    void runProbe(const Trainer &trainer, const Example &probe);
    void flush(TrainingProgress &pending);
    void post(std::function<void()> onGuiThread);
    void setState(State state);
    void onThreadFinished();

    TrainingSetup m_setup;
    State m_state = State::Idle;
    QThread *m_thread = nullptr;
    QFutureSynchronizer<void> m_saveJobs; // saves after the run ended
    std::mutex m_saveMutex; // one save at a time: a save starts by removing what others left half-written

    mutable std::mutex m_mutex; // guards everything below except m_stepsDone
    std::condition_variable m_wake;
    std::shared_ptr<Trainer> m_trainer; // set by the worker; the GUI thread uses it only when no run is going
    std::vector<QString> m_saveQueue;
    bool m_loopAlive = false; // the worker still takes save requests between steps
    bool m_pauseRequested = false;
    bool m_stopRequested = false;
    std::atomic<int> m_stepsDone {0};
};

} // namespace atlas
