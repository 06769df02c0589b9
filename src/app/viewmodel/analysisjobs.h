#pragma once

#include "util/threadpriority.h"

#include <QFutureWatcher>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <string>

namespace atlas {

// The session's analyses in the background: the one the view on screen waits for, and the last one a view left
// behind when the user switched tabs, which runs on and is there, finished or still running, when its tab comes back
// (a head ablation or a patching sweep of several seconds is not started again from zero). Within one view only the
// newest request counts: a slider dragged cancels the runs it makes stale. Each finished run reaches `finished` on the
// thread that made this object, unless it was cancelled. A job must not throw (it turns errors into its Result) and
// must own, or keep alive, everything it reads: the destructor cancels every run and waits for them.
template <class Result> class AnalysisJobs
{
public:
    using Job = std::function<Result(const std::atomic<bool> &cancel)>;

    explicit AnalysisJobs(std::function<void(const std::string &key, Result)> finished)
        : m_finished(std::move(finished))
    {
        m_pool.setMaxThreadCount(2); // the view on screen's run beside the one left behind
    }
    ~AnalysisJobs()
    {
        for (Run &run : m_runs)
            *run.cancel = true;
        m_pool.waitForDone();
    }
    AnalysisJobs(const AnalysisJobs &) = delete;
    AnalysisJobs &operator=(const AnalysisJobs &) = delete;

    // The view `view` now needs `key`: runs `job` unless a run of `key` is under way already. Other runs of `view`
    // are cancelled; of the other views' runs, the latest keeps going and older ones are cancelled.
    void start(const std::string &view, const std::string &key, Job job, std::shared_ptr<void> progress = {})
    {
        settle(view, key);
        if (find(key))
            return;
        Run &run = m_runs.emplace_back();
        run.view = view;
        run.key = key;
        run.progress = std::move(progress);
        run.cancel = std::make_shared<std::atomic<bool>>(false);
        run.watcher = std::make_unique<QFutureWatcher<Result>>();
        QFutureWatcher<Result> *watcher = run.watcher.get();
        QObject::connect(watcher, &QFutureWatcher<Result>::finished, watcher, [this, watcher] { done(watcher); });
        watcher->setFuture(QtConcurrent::run(&m_pool, [job = std::move(job), cancel = run.cancel] {
            runAtBackgroundPriority(); // the window's thread keeps its core (util/threadpriority.h)
            return job(*cancel);
        }));
    }
    // `view` needs no run (a problem, or a view without analysis): its runs are cancelled, the others' kept.
    void stop(const std::string &view) { settle(view, {}); }
    // Cancels the run of `key`, if any: its result will not come.
    void cancel(const std::string &key)
    {
        if (Run *run = find(key))
            *run->cancel = true;
    }
    // Cancels every run but those of `view` (the input changed: what other views computed is stale).
    void cancelOtherViews(const std::string &view)
    {
        for (Run &run : m_runs)
            if (run.view != view)
                *run.cancel = true;
    }
    bool running(const std::string &key) const { return const_cast<AnalysisJobs *>(this)->find(key) != nullptr; }
    // The progress object the run of `key` was started with, or null.
    std::shared_ptr<void> progress(const std::string &key)
    {
        const Run *run = find(key);
        return run ? run->progress : nullptr;
    }
    int runningCount() const { return int(m_runs.size()); }

private:
    struct Run
    {
        std::string view, key;
        std::shared_ptr<std::atomic<bool>> cancel;
        std::shared_ptr<void> progress;
        std::unique_ptr<QFutureWatcher<Result>> watcher;
    };

    Run *find(const std::string &key)
    {
        for (Run &run : m_runs)
            if (run.key == key && !*run.cancel)
                return &run;
        return nullptr;
    }
    void settle(const std::string &view, const std::string &key)
    {
        const Run *latestOther = nullptr;
        for (const Run &run : m_runs)
            if (run.view != view && !*run.cancel)
                latestOther = &run;
        for (Run &run : m_runs)
            if ((run.view == view && run.key != key) || (run.view != view && &run != latestOther))
                *run.cancel = true;
    }
    void done(QFutureWatcher<Result> *watcher)
    {
        for (auto it = m_runs.begin(); it != m_runs.end(); ++it) {
            if (it->watcher.get() != watcher)
                continue;
            const bool cancelled = *it->cancel;
            const std::string key = it->key;
            Result result = watcher->result();
            it->watcher.release()->deleteLater(); // this slot runs inside its signal
            m_runs.erase(it);
            if (!cancelled)
                m_finished(key, std::move(result));
            return;
        }
    }

    std::function<void(const std::string &, Result)> m_finished;
    QThreadPool m_pool;
    std::list<Run> m_runs; // in the order they started
};

} // namespace atlas
