#pragma once

#include "views/view.h"

namespace atlas {

class AttentionReadout;
class HeatmapPlot;

// The attention probabilities of one head (`layer.{l}.attn.probs`, head h) as a heat map: queries top to
// bottom, keys left to right; hovering a cell names both tokens, the score and the probability. A model with
// attention sinks (gpt-oss) gets one more column on the left: the share of each row the head's sink took.
class AttentionView : public View
{
    Q_OBJECT

public:
    explicit AttentionView(QWidget *parent = nullptr);

    HeatmapPlot *plot() const { return m_plot; }
    // How long the last refresh took (pooling and filling the colour map, not the replot), in microseconds.
    int lastRefreshMicros() const { return m_lastRefreshMicros; }
    // The tooltip text for original cell (row, col) of the current head.
    QString cellText(int row, int col) const;
    bool drawing() const override;
    void finishDrawing() override;

protected:
    void refresh() override;

private:
    void describeHead(int tokens, int keys, float first, const Tensor *shares);
    void drawPooledHead(std::shared_ptr<const AttentionReadout> readout);
    void drawHead(const HeadMatrix &probs, const HeadMatrix &masked, const QString &problem);

    HeatmapPlot *m_plot = nullptr;
    int m_lastRefreshMicros = 0;
    bool m_sinkColumn = false; // gpt-oss: column 0 is the head's sink, the keys follow
};

} // namespace atlas

namespace atlas::views::attentionmap {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::attentionmap
