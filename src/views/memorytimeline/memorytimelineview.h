#pragma once

#include "memory/memorytimeline.h"
#include "views/view.h"

#include <QStringList>

#include <memory>
#include <vector>

class QCPAxisRect;
class QCPItemStraightLine;
class QCPAxis;
class QCPItemText;
class QCPTextElement;
class QCustomPlot;
class QLabel;
class QMouseEvent;
class QStackedLayout;

namespace atlas {

struct MemoryTimelineAnalysis;

// One training step's memory under plain backprop, checkpointing and reversible blocks (view kind
// "memory-timeline"): for each strategy, the live bytes after every allocation and free, stacked by category
// (parameters, optimizer state, gradients, stored, recomputed, workspace), against the op the step was running,
// on shared axes so the strategies compare at a glance. Shaded bands mark the phases (forward, backward,
// recompute, optimizer); each strategy's peak is marked and labelled with what was live there. The cursor (spec
// "cursor", an op index) is a vertical line with the op each strategy runs there and its live bytes: click or drag
// to move it, ← → (or Space) to step.
//
// The numbers are MemoryTimelineAnalysis's (view/viewanalysis.h: the core trains the step three times, recording
// every tensor buffer); the view stacks and draws them.
class MemoryTimelineView : public View
{
    Q_OBJECT

public:
    explicit MemoryTimelineView(QWidget *parent = nullptr);

    QString message() const; // drawn instead of the plots; empty when they are drawn
    const MemoryTimelineAnalysis *drawnAnalysis() const { return m_drawn.get(); }
    QCustomPlot *plot() const { return m_plot; }
    int strategyRows() const { return int(m_rects.size()); }
    QString peakLabel(int row) const; // the peak's label of strategy `row`
    QString cursorLabel(int row) const; // the cursor's label of strategy `row` (empty without a cursor)
    QString title() const;

    QSize sizeHint() const override { return {1200, 900}; }
    // Three rows of axes, each tall enough to read: in a small window the view scrolls.
    QSize minimumSizeHint() const override;

protected:
    void refresh() override;
    void keyPressEvent(QKeyEvent *event) override;

private:
    void showMessage(const QString &text);
    void draw(const MemoryTimelineAnalysis &analysis);
    void drawStrategy(QCPAxisRect *rect, const TimelineStrategy &s, double maxMiB);
    void drawCursor();
    void moveCursorTo(QMouseEvent *event);
    void setCursor(int op);
    void applyTheme();

    QStackedLayout *m_stack;
    QLabel *m_message;
    QCustomPlot *m_plot;
    QCPTextElement *m_title = nullptr;
    std::vector<QCPAxisRect *> m_rects;
    std::vector<QCPAxis *> m_peakLabels; // each panel's top axis, its label what was live at the peak
    std::vector<QCPAxis *> m_cursorAxes; // each panel's bottom axis, its label what is live at the cursor
    QStringList m_cursorTexts; // each panel's: "op 31: … live …", empty without a cursor
    std::vector<QCPItemStraightLine *> m_cursorLines;
    std::shared_ptr<const MemoryTimelineAnalysis> m_drawn;
};

} // namespace atlas

namespace atlas::views::memorytimeline {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::memorytimeline
