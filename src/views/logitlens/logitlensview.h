#pragma once

#include "views/heatmapcelltexts.h"
#include "views/view.h"

#include <memory>
#include <vector>

class QLabel;
class QLineEdit;

namespace atlas {

class HeatmapPlot;
struct LogitLensAnalysis;

// The logit lens (view kind "logit-lens"; analysis/logitlens.h): a grid of the streams the model has computed, the
// output at the top and the embedding at the bottom, by position. Each cell is what the output head reads from that
// stream: its most probable token written in the cell, coloured by that token's probability, or by the probability of
// the spec's `target` when one is tracked; the hover lists the first five, the entropy and the target's rank.
class LogitLensView : public View
{
    Q_OBJECT

public:
    explicit LogitLensView(QWidget *parent = nullptr);

    HeatmapPlot *plot() const { return m_plot; }
    QString message() const; // drawn instead of the grid; empty when the grid is drawn
    QString formula() const;
    // The most probable token written in cell (display row, position); empty where the cell is too small for it.
    QString cellText(int row, int position) const;
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }
    QSize sizeHint() const override { return {1000, 650}; }

protected:
    void refresh() override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void showMessage(const QString &text);
    void writeCellTexts(); // the top tokens in the cells, where they fit
    QString hover(int row, int col) const;
    int lensRow(int displayRow) const; // display row 0 is the last stream

    QWidget *m_controls = nullptr;
    QLineEdit *m_target = nullptr;
    QLabel *m_formula = nullptr, *m_message = nullptr;
    HeatmapPlot *m_plot = nullptr;
    std::shared_ptr<const LogitLensAnalysis> m_drawn;
    std::shared_ptr<std::vector<float>> m_cells;
    HeatmapCellTexts m_texts; // [display row × T]
};

} // namespace atlas

namespace atlas::views::logitlens {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::logitlens
