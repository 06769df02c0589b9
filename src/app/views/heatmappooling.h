#pragma once

#include "viewmodel/latestjob.h"
#include "views/downsample.h"

#include <QSize>

#include <atomic>
#include <functional>

namespace atlas {

// A heat map's pooled picture: its source pooled to a target size and a window of the matrix. A large matrix whose
// source keeps its data alive is pooled on a worker (pooling 8192² cells takes a few hundred ms, too long for the GUI
// thread), anything else at once; the latest request wins, and `adopted` runs once its picture is pooled().
class HeatmapPooling
{
public:
    using Source
        = std::function<Pooled(int maxRows, int maxCols, const CellWindow &window, const std::atomic<bool> &cancel)>;
    static constexpr int64_t kOnWorkerCells = int64_t(1) << 22;

    explicit HeatmapPooling(std::function<void()> adopted)
        : m_adopted(std::move(adopted))
    {
    }

    // `mayRunOnWorker`: the source keeps what it reads alive, so a job may outlive the caller's data.
    void setSource(Source source, bool mayRunOnWorker);
    bool hasSource() const { return bool(m_source); }
    // No source, no picture, and no pooling under way.
    void clear();
    // Pools a `cells`-cell matrix's `window` to at most target.height() × target.width() cells: on the worker past
    // kOnWorkerCells when the source may run there and `headless` is false, at once otherwise.
    void pool(QSize target, const CellWindow &window, int64_t cells, bool headless);
    bool pending() const { return m_pending; }
    // Completes a pooling under way here (exports call it before they draw).
    void finish();
    const Pooled &pooled() const { return m_pooled; }

private:
    LatestJob<Pooled>::Job job() const;

    Source m_source;
    bool m_mayRunOnWorker = false;
    QSize m_target;
    CellWindow m_window;
    Pooled m_pooled;
    bool m_pending = false;
    std::function<void()> m_adopted;
    LatestJob<Pooled> m_job {[this](Pooled pooled) { // last: its destructor waits for the job in progress
        m_pooled = std::move(pooled);
        m_pending = false;
        m_adopted();
    }};
};

} // namespace atlas
