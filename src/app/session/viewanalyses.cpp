#include "session/viewanalyses.h"

namespace atlas {

ViewAnalyses::ViewAnalyses()
    : m_jobs([this](const std::string &, Outcome outcome) { adopt(std::move(outcome)); })
{
    m_progressTimer.setInterval(150);
    connect(&m_progressTimer, &QTimer::timeout, this, [this] {
        if (!m_state.pending || !m_progress)
            return m_progressTimer.stop();
        const int done = m_progress->done, total = m_progress->total;
        if (done == m_state.done && total == m_state.total)
            return;
        m_state.done = done;
        m_state.total = total;
        emit changed();
    });
}

void ViewAnalyses::show(const std::string &view, AnalysisRequest request, size_t keepBytes)
{
    m_keepBytes = keepBytes;
    if (request.key == m_key && !request.key.empty() && request.problem.empty()) {
        m_state.settings = request.settings; // another view's of the same analysis (the timeline's and the graph's)
        return; // the result on hand, or under way, still fits
    }
    m_key = request.key;
    m_state = {};
    m_state.settings = request.settings;
    m_pins.clear();
    if (request.key.empty() || !request.problem.empty()) {
        m_jobs.stop(view);
        m_state.problem = QString::fromStdString(request.problem);
        return;
    }
    if (const RecentAnalyses::Entry *recent = m_recent.find(request.key)) { // computed a moment ago
        m_jobs.stop(view);
        m_state.result = recent->result;
        m_pins = recent->pins;
        return;
    }
    m_state.pending = true;
    m_pins = request.pinned;
    // A run left behind when its tab was switched away may still be under way: its progress, not a new run.
    m_progress = m_jobs.running(request.key) ? std::static_pointer_cast<AnalysisProgress>(m_jobs.progress(request.key))
                                             : request.progress;
    if (m_progress)
        m_progressTimer.start();
    m_jobs.start(
        view, request.key,
        [run = request.run, key = request.key, pins = request.pinned](const std::atomic<bool> &cancel) {
            Outcome outcome {key, nullptr, {}, pins};
            try {
                outcome.result = run(cancel);
            } catch (const std::exception &e) {
                outcome.error = QString::fromStdString(e.what());
            }
            return outcome;
        },
        request.progress);
}

void ViewAnalyses::cancel()
{
    if (!m_state.pending)
        return;
    m_jobs.cancel(m_key); // the key stays: the same spec and trace do not start it again
    m_state = {};
    m_state.problem = tr("Cancelled. Change the view's settings or the input to run it again.");
    emit changed();
}

void ViewAnalyses::adopt(Outcome outcome)
{
    if (outcome.error.isEmpty()) // beside the trace; a run left behind is found here when its tab comes back
        m_recent.add({outcome.key, outcome.result, outcome.pins}, m_keepBytes);
    if (outcome.key != m_key)
        return;
    m_state.pending = false;
    m_state.result = outcome.result;
    m_state.problem = outcome.error;
    emit changed();
}

} // namespace atlas
