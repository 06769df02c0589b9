#pragma once

#include "session/recentanalyses.h"
#include "view/viewanalysis.h"
#include "viewmodel/analysisjobs.h"
#include "viewmodel/viewinput.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <string>
#include <vector>

namespace atlas {

// The analysis the view on screen needs (view/viewanalysis.h), run off the GUI thread: a request whose key is the
// result on hand, or the run under way, starts nothing; a result computed a moment ago, or by a run a tab switch left
// behind, comes back at once (RecentAnalyses); otherwise it runs (AnalysisJobs), reporting its progress while it does.
class ViewAnalyses : public QObject
{
    Q_OBJECT

public:
    ViewAnalyses();

    // `view`'s request for the spec and trace on screen. `keepBytes`: what recent results may keep alive.
    void show(const std::string &view, AnalysisRequest request, size_t keepBytes);
    // Stops the analysis under way; the view says it was cancelled until its spec or the trace changes.
    void cancel();
    // The input changed: what the other views were computing is of the last one.
    void cancelOtherViews(const std::string &view) { m_jobs.cancelOtherViews(view); }
    const AnalysisState &state() const { return m_state; }
    int underWay() const { return m_jobs.runningCount(); }

signals:
    void changed(); // finished, failed, started, cancelled, or moved on

private:
    struct Outcome
    {
        std::string key;
        std::shared_ptr<const ViewAnalysis> result;
        QString error;
        std::vector<Tensor> pins; // the tensors the run read (their addresses are in its key)
    };
    void adopt(Outcome outcome);
    void watchProgress(); // m_progress into m_state while the run is under way

    AnalysisState m_state;
    std::string m_key; // the request m_state answers or waits for
    std::vector<Tensor> m_pins; // the tensors that request reads
    size_t m_keepBytes = 0;
    RecentAnalyses m_recent;
    std::shared_ptr<AnalysisProgress> m_progress; // the run's, when it reports one
    QTimer m_progressTimer; // reads it while the run is under way
    AnalysisJobs<Outcome> m_jobs; // last: its destructor waits for the analyses in progress
};

} // namespace atlas
