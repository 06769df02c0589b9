#pragma once

#include "attention/approximationsweep.h"

#include <qcustomplot.h>

#include <memory>
#include <string>

namespace atlas {

// The error plot of the "approximation" view: an approximation's error against exact softmax attention for every
// size of a sweep (Linformer's k, Performer's features m), on log-log axes. Weights (mean row Σ_j |w_ij − p_ij|)
// on the left axis, context (mean |ΔC|) on the right; each the mean over the seeds as a line with points, and
// the seeds' min–max as a band. One size is marked by a dashed vertical line. Errors of exactly 0 cannot be drawn
// on a log axis and are left out.
class ApproximationErrorPlot : public QCustomPlot
{
    Q_OBJECT

public:
    explicit ApproximationErrorPlot(QWidget *parent = nullptr);

    // Draws `sweep` (kept alive here); nullptr clears the plot.
    void setSweep(std::shared_ptr<const attention::ApproximationSweep> sweep);
    void setSelected(int index); // marks sweep->points[index]; -1 hides the mark
    void setTheme(const std::string &theme);

    QCPGraph *weightGraph() const { return m_weightMean; } // mean row L1 per size
    QCPGraph *contextGraph() const { return m_contextMean; } // mean |ΔC| per size
    double markedValue() const { return m_marker->visible() ? m_marker->point1->coords().x() : 0.0; }

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void fill();
    void updateValueTicks();

    std::shared_ptr<const attention::ApproximationSweep> m_sweep;
    QCPGraph *m_weightLow = nullptr, *m_weightHigh = nullptr, *m_weightMean = nullptr;
    QCPGraph *m_contextLow = nullptr, *m_contextHigh = nullptr, *m_contextMean = nullptr;
    QCPItemStraightLine *m_marker = nullptr;
    QCPItemText *m_markerLabel = nullptr;
};

} // namespace atlas
