#pragma once

#include "views/view.h"

class QCPBars;
class QCPGraph;
class QCPTextElement;
class QCustomPlot;
class QLabel;

namespace atlas {

struct ScalingAnalysis;

// Why attention divides by √d (the spec's "scaling" analysis). Left: Var(q·k) against d for random q, k with
// unit-variance components (measured points, and the line d) and Var(q·k/√d) (points, and the line 1), log-log,
// with this head's own measurement marked at its d. Right: the query's softmax row with the division (what the model
// computes) and without it. A caption states the head's numbers.
class ScalingView : public View
{
    Q_OBJECT

public:
    explicit ScalingView(QWidget *parent = nullptr);

    QString caption() const;
    QString message() const; // shown instead of the plots, or empty
    QCustomPlot *variancePlot() const { return m_variance; }
    QCustomPlot *softmaxPlot() const { return m_softmax; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text);
    void drawVariance(const ScalingAnalysis &a);
    void drawSoftmax(const ScalingAnalysis &a);
    void applyTheme();
    void updateSoftmaxTicks();

    QLabel *m_message = nullptr;
    QWidget *m_plots = nullptr;
    QCustomPlot *m_variance = nullptr;
    QCustomPlot *m_softmax = nullptr;
    QCPTextElement *m_varianceTitle = nullptr;
    QCPTextElement *m_softmaxTitle = nullptr;
    QCPGraph *m_raw = nullptr, *m_rawTheory = nullptr, *m_scaled = nullptr, *m_scaledTheory = nullptr;
    QCPGraph *m_headRaw = nullptr, *m_headScaled = nullptr;
    QCPBars *m_withDivision = nullptr, *m_withoutDivision = nullptr;
    QLabel *m_caption = nullptr;
    int m_tickedEvery = 0, m_tickedTokens = -1; // the key labels drawn: every n-th of T
};

} // namespace atlas

namespace atlas::views::scaling {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::scaling
