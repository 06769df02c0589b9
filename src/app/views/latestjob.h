#pragma once

#include <QFutureWatcher>
#include <QThreadPool>
#include <QWidget>
#include <QtConcurrent/QtConcurrentRun>

#include <functional>

namespace atlas {

// The latest of a view's background computations. Each start() supersedes the ones before it: their results are
// dropped. Jobs run one at a time on a thread of their own (a superseded job finishes before the next starts) and
// each result reaches `adopt` on the thread that made this object. The destructor waits for the job in progress,
// which must own, or keep alive, everything it reads.
template <class Result> class LatestJob
{
public:
    explicit LatestJob(std::function<void(Result)> adopt)
        : m_adopt(std::move(adopt))
    {
        m_pool.setMaxThreadCount(1);
        QObject::connect(&m_watcher, &QFutureWatcher<Tagged>::finished, &m_watcher, [this] {
            if (m_watcher.isCanceled()) // the empty future drop() sets
                return;
            Tagged tagged = m_watcher.future().takeResult();
            if (tagged.generation == m_generation)
                m_adopt(std::move(tagged.result));
        });
    }
    ~LatestJob() { m_pool.waitForDone(); }
    LatestJob(const LatestJob &) = delete;
    LatestJob &operator=(const LatestJob &) = delete;

    // Runs `job` on the worker, or right here (adopting before returning) when `now`.
    void start(std::function<Result()> job, bool now)
    {
        drop();
        if (now) {
            m_adopt(job());
            return;
        }
        m_watcher.setFuture(QtConcurrent::run(&m_pool, [job = std::move(job), generation = m_generation] {
            return Tagged {generation, job()};
        }));
    }
    // The result still to come, if any, will not be adopted.
    void drop()
    {
        ++m_generation;
        m_watcher.setFuture(QFuture<Tagged>());
    }
    bool running() const { return m_watcher.isRunning(); }

private:
    struct Tagged
    {
        uint64_t generation = 0;
        Result result;
    };

    std::function<void(Result)> m_adopt;
    QThreadPool m_pool;
    QFutureWatcher<Tagged> m_watcher;
    uint64_t m_generation = 0;
};

// A view drawn headless (`render`) is neither shown nor parented: it computes at once instead of on a worker.
inline bool drawnHeadless(const QWidget *view)
{
    return view->parentWidget() == nullptr && !view->isVisible();
}

} // namespace atlas
