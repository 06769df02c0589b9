#pragma once

#include "view/comparison.h"
#include "views/view.h"

#include <memory>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QMouseEvent;
class QPushButton;

namespace atlas {

class HeatmapPlot;
struct ComparisonAnalysis;

// Two runs side by side (the spec's "compare", view/comparison.h): the spec's view drawn for run A (the session's)
// and for run B (the spec with another model, text or kernel, run by the comparison's analysis), each under a caption
// naming its run; layer, head and position are the spec's, so both sides follow a click on either. "difference"
// draws the attention view's A − B on a diverging scale instead, and "heads" every head's distance between the runs
// (a click opens that head's A − B) with the next-token distributions' KL in the summary. The navigator puts this view
// in the tab of the spec's view while a comparison is on.
class ComparisonView : public View
{
    Q_OBJECT

public:
    explicit ComparisonView(QWidget *parent = nullptr);

    // The views of the two sides (null before a spec names the view kind).
    View *sideA() const { return m_a; }
    View *sideB() const { return m_b; }
    HeatmapPlot *differencePlot() const { return m_difference; }
    HeatmapPlot *headsPlot() const { return m_heads; }
    QString summary() const;
    QString captionA() const;
    QString captionB() const;
    QString message() const; // what side B or the difference shows instead of its drawing; empty when drawn
    std::vector<QWidget *> interfaceWidgets() const override;
    QSize sizeHint() const override { return {1200, 650}; }

protected:
    void refresh() override;

private:
    void makeSides(const std::string &kind);
    // A side's view input: its run (A's is the session's, B's the comparison's) with its own analysis.
    ViewInput sideInput(const ViewInput &run, const ComparisonAnalysis *result, Side side) const;
    void refreshSides(const ComparisonAnalysis *result);
    void refreshDifference(const ComparisonAnalysis *result);
    void refreshHeads(const ComparisonAnalysis *result);
    // Whether B's result is here to draw on `plot`: if not, the plot says B is running (or why it failed); if so, B's
    // labels are made for it.
    bool readyToDraw(const ComparisonAnalysis *result, HeatmapPlot *plot);
    QString differenceHover(int row, int col) const;
    QString headsHover(int layer, int head) const;
    void openHead(QMouseEvent *event);

    std::string m_kind;
    QWidget *m_controls = nullptr;
    QComboBox *m_mode = nullptr;
    QPushButton *m_stop = nullptr;
    QLabel *m_summary = nullptr, *m_captionA = nullptr, *m_captionB = nullptr, *m_message = nullptr;
    QWidget *m_sides = nullptr;
    View *m_a = nullptr, *m_b = nullptr;
    HeatmapPlot *m_difference = nullptr;
    HeatmapPlot *m_heads = nullptr; // "heads": layers × heads, how far B's attention is from A's
    // B's view input, made once per result (its labels read B's tokenizer).
    const ComparisonAnalysis *m_madeFrom = nullptr;
    ViewInput m_inputB;
    std::shared_ptr<const ViewAnalysis> m_shown; // the result drawn (the difference plot reads its cells)
};

} // namespace atlas
