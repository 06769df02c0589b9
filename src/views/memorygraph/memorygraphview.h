#pragma once

#include "memory/computationgraph.h"
#include "views/view.h"

#include <QRect>

class QLabel;

#include <memory>
#include <vector>

namespace atlas {

struct MemoryTimelineAnalysis;

// The computation graph as the training step runs it (view kind "memory-graph"): for plain backprop, checkpointing
// and reversible blocks, the model as a chain of nodes (embedding, blocks, head), each coloured by what its
// activations are doing at the cursor's op: not computed yet, computing, kept, freed, recomputing, recomputed,
// backward, done. Under each chain, the live activation bytes of that strategy's step with the cursor on them. The
// cursor is the memory timeline's (spec "cursor"): Space or → steps, ← steps back, Home and End jump, a click on a
// strip moves it. The states are computationGraphAt's, from the recording MemoryTimelineAnalysis holds.
class MemoryGraphView : public View
{
    Q_OBJECT

public:
    explicit MemoryGraphView(QWidget *parent = nullptr);

    QString message() const { return m_message; } // drawn instead of the graph; empty when the graph is drawn
    // The states drawn for strategy `row` (plain, checkpoint, reversible); empty for one that did not run.
    std::vector<GraphNode> nodes(int row) const;
    int strategyRows() const;

    QSize sizeHint() const override { return {1200, 700}; }
    QSize minimumSizeHint() const override;

protected:
    void refresh() override;
    void paintEvent(QPaintEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;

private:
    void showMessage(const QString &text); // empty: the graph is drawn
    void setCursor(int op);
    void paintStrategy(QPainter &p, const QRect &area, int row);
    void paintLegend(QPainter &p, const QRect &area);
    int maxOps() const;

    QLabel *m_messageLabel;
    QString m_message;
    std::shared_ptr<const MemoryTimelineAnalysis> m_drawn;
    std::vector<QRect> m_strips; // where each strategy's live-bytes strip was painted (clicks move the cursor)
};

} // namespace atlas

namespace atlas::views::memorygraph {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::memorygraph
