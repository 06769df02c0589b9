#pragma once

#include "views/view.h"

#include <memory>
#include <vector>

class QComboBox;
class QCustomPlot;
class QCPBars;
class QLabel;
class QSpinBox;

namespace atlas {

class HeatmapPlot;
class PlotTitle;
struct RolloutAnalysis;

// Attention rollout and flow (view kind "rollout"; analysis/attentionflow.h). Left: the rollout after the last layer
// traced, every position (rows) against every input token (columns), the spec's `position` outlined. Right, for that
// position: the last layer's own attention (its heads combined), the rollout and the flow, bar beside bar for each
// input token. The spec's `rollout_heads` combines the heads; `site` picks an encoder-decoder's stack.
class RolloutView : public View
{
    Q_OBJECT

public:
    explicit RolloutView(QWidget *parent = nullptr);

    HeatmapPlot *rolloutPlot() const { return m_map; }
    QCustomPlot *barsPlot() const { return m_plot; }
    // The three bar series: 0 the last layer's attention, 1 the rollout, 2 the flow (empty above its limit).
    QCPBars *bars(int series) const { return m_bars[size_t(series)]; }
    QString message() const; // drawn instead of the plots; empty when they are drawn
    QString caption() const;
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }
    QSize sizeHint() const override { return {1100, 650}; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text);
    void drawBars(const RolloutAnalysis &a, const QStringList &tokens);
    void editSpec(int position, const QString &fusion);

    QWidget *m_controls = nullptr;
    QSpinBox *m_position = nullptr;
    QComboBox *m_fusion = nullptr;
    QLabel *m_formula = nullptr, *m_message = nullptr, *m_caption = nullptr;
    QWidget *m_body = nullptr;
    HeatmapPlot *m_map = nullptr;
    QCustomPlot *m_plot = nullptr;
    PlotTitle *m_title = nullptr;
    std::vector<QCPBars *> m_bars;
};

} // namespace atlas

namespace atlas::views::rollout {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::rollout
