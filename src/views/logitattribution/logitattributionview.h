#pragma once

#include "views/heatmapcelltexts.h"
#include "views/view.h"

#include <memory>
#include <vector>

class QLabel;
class QLineEdit;
class QSpinBox;

namespace atlas {

class HeatmapPlot;
struct LogitAttributionAnalysis;

// Direct logit attribution (view kind "logit-attribution"; analysis/logitattribution.h): a layer × head grid of what
// each head wrote straight into the logit (or the logit difference target − against) at the spec's position, with
// each layer's output-projection bias and feed-forward beside it, the value written in each cell where it fits. The
// largest writers are listed beside the grid, and the line under it checks that the parts sum to the model's logit.
// A click on a head opens it in the Attention view.
class LogitAttributionView : public View
{
    Q_OBJECT

public:
    explicit LogitAttributionView(QWidget *parent = nullptr);

    HeatmapPlot *plot() const { return m_plot; }
    QString message() const; // drawn instead of the grid; empty when the grid is drawn
    QString caption() const; // the check: the parts' sum against the model's logit
    QString topWriters() const; // the list beside the grid, as plain text
    QString cellText(int row, int col) const; // the value written in a cell; empty where it does not fit
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }
    QSize sizeHint() const override { return {1100, 650}; }

protected:
    void refresh() override;
    void resizeEvent(QResizeEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void showMessage(const QString &text);
    void writeCellTexts();
    double cellValue(int row, int col) const;
    QString columnName(int col) const;

    QWidget *m_controls = nullptr;
    QLineEdit *m_target = nullptr, *m_against = nullptr;
    QSpinBox *m_position = nullptr;
    QLabel *m_formula = nullptr, *m_message = nullptr, *m_caption = nullptr, *m_top = nullptr;
    QWidget *m_body = nullptr;
    HeatmapPlot *m_plot = nullptr;
    std::shared_ptr<const LogitAttributionAnalysis> m_drawn;
    std::shared_ptr<std::vector<float>> m_cells;
    HeatmapCellTexts m_texts; // each cell's value, where it fits
    QPointF m_pressedAt;
};

} // namespace atlas

namespace atlas::views::logitattribution {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::logitattribution
