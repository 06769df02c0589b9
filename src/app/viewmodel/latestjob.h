#pragma once

#include "util/threadpriority.h"

#include <QFutureWatcher>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <functional>
#include <memory>

namespace atlas {

// The latest of a series of background computations, for the session's analyses and the views' drawing work.
// Jobs run one at a time on a thread of their own; each result reaches `adopt` on the thread that made this
// object, unless a newer start() or drop() superseded it. A superseded job is asked to stop (its `cancel` flag
// turns true; a job polls it when it can) and the newest start() waits behind it: while requests come in faster
// than jobs finish (a slider dragged), only the one running and the last one are computed. A job must not throw
// (it turns errors into its Result), and must own, or keep alive, everything it reads: the destructor cancels
// and waits for the job in progress.
template <class Result> class LatestJob
{
public:
    using Job = std::function<Result(const std::atomic<bool> &cancel)>;

    explicit LatestJob(std::function<void(Result)> adopt)
        : m_adopt(std::move(adopt))
    {
        m_pool.setMaxThreadCount(1);
        QObject::connect(&m_watcher, &QFutureWatcher<Result>::finished, &m_watcher, [this] { finished(); });
    }
    ~LatestJob()
    {
        drop();
        m_pool.waitForDone();
    }
    LatestJob(const LatestJob &) = delete;
    LatestJob &operator=(const LatestJob &) = delete;

    // Runs `job` on the worker once the job in progress, if any, has stopped.
    void start(Job job)
    {
        if (!m_running) {
            launch(std::move(job));
            return;
        }
        supersede();
        m_pending = std::move(job);
    }
    // Runs `job` here and adopts its result before returning (headless drawing, where nothing may wait).
    void runNow(const Job &job)
    {
        drop();
        const std::atomic<bool> never {false};
        m_adopt(job(never));
    }
    // No result still to come will be adopted.
    void drop()
    {
        supersede();
        m_pending = nullptr;
    }
    // A job is running or waiting to run.
    bool busy() const { return m_running || m_pending != nullptr; }

private:
    void launch(Job job)
    {
        m_cancel = std::make_shared<std::atomic<bool>>(false);
        m_superseded = false;
        m_running = true;
        m_watcher.setFuture(QtConcurrent::run(&m_pool, [job = std::move(job), cancel = m_cancel] {
            runAtBackgroundPriority(); // the window's thread keeps its core (util/threadpriority.h)
            return job(*cancel);
        }));
    }
    void supersede()
    {
        if (!m_running)
            return;
        *m_cancel = true;
        m_superseded = true;
    }
    void finished()
    {
        m_running = false;
        if (m_pending) {
            Job next = std::move(m_pending);
            m_pending = nullptr;
            launch(std::move(next));
            return;
        }
        if (!m_superseded)
            m_adopt(m_watcher.result());
    }

    std::function<void(Result)> m_adopt;
    QThreadPool m_pool;
    QFutureWatcher<Result> m_watcher;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    Job m_pending;
    bool m_running = false;
    bool m_superseded = false;
};

} // namespace atlas
