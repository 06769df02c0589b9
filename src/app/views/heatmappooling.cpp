#include "views/heatmappooling.h"

namespace atlas {

void HeatmapPooling::setSource(Source source, bool mayRunOnWorker)
{
    m_source = std::move(source);
    m_mayRunOnWorker = mayRunOnWorker;
}

void HeatmapPooling::clear()
{
    m_job.drop();
    m_pending = false;
    m_source = nullptr;
    m_pooled = Pooled();
}

void HeatmapPooling::pool(QSize target, const CellWindow &window, int64_t cells, bool headless)
{
    m_target = target;
    m_window = window;
    if (cells > kOnWorkerCells && m_mayRunOnWorker && !headless) {
        m_pending = true;
        m_job.start(job()); // the job holds the source, which keeps what it reads alive
    } else
        m_job.runNow(job());
}

void HeatmapPooling::finish()
{
    if (m_pending)
        m_job.runNow(job());
}

LatestJob<Pooled>::Job HeatmapPooling::job() const
{
    return [source = m_source, target = m_target, window = m_window](const std::atomic<bool> &cancel) {
        return source ? source(target.height(), target.width(), window, cancel) : Pooled();
    };
}

} // namespace atlas
