#pragma once

#include "views/analysisplotview.h"

#include "recurrence/recurrence.h"

#include <QPointer>

class QDoubleSpinBox;
class QMouseEvent;
class QSpinBox;

namespace atlas {

// RNN vs attention (view kind "recurrence"; the decks' "why self-attention"): an Elman RNN run on the vectors block
// `layer`'s attention reads, beside head `head` of that block, for row i (`query`, the last token by default). Left,
// Vaswani et al.'s two counts on this input: the steps from token 0 to row i (the RNN's i, attention's one) and the
// steps one after another (the RNN's T, the transformer's L blocks); middle, the RNN's measured reach
// log₁₀‖∂h_i/∂x_j‖ under its bound ρ^(i−j)‖U‖_F; right, the head's weights from row i. Over the plot, ρ and row i (spec
// keys rnn_radius, query). Hovering a token gives its numbers. The numbers are RecurrenceAnalysis's
// (recurrence/rnnreach.h).
class RecurrenceView : public ResultPlotView<RecurrenceAnalysis>
{
    Q_OBJECT

public:
    explicit RecurrenceView(QWidget *parent = nullptr);

protected:
    void resizeEvent(QResizeEvent *event) override;
    QString draw(const RecurrenceAnalysis &result) override;
    QString pendingText() const override;

private:
    void syncControls();
    void labelTokenAxes();
    void showValueAt(QMouseEvent *event);

    QDoubleSpinBox *m_radius;
    QSpinBox *m_query;
    std::vector<QPointer<QCPAxisRect>> m_panels; // while drawn: the reach and the weights, both by token
    RecurrenceComparison m_shown; // what the tooltips read
};

} // namespace atlas

namespace atlas::views::recurrence {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::recurrence
