#pragma once

#include "views/view.h"

class QLabel;

namespace atlas {

class HeatmapPlot;

// How masking turns scores into probabilities, for one layer and head, side by side: the scores QKᵀ/√d before
// masking, the mask itself (0 where a query may attend a key, −∞ where not), and the probabilities after
// softmax, with the formula underneath. Each panel shows "not computed yet" until its operation has run.
class MaskView : public View
{
    Q_OBJECT

public:
    explicit MaskView(QWidget *parent = nullptr);

    HeatmapPlot *scoresPlot() const { return m_scores; }
    HeatmapPlot *maskPlot() const { return m_mask; }
    HeatmapPlot *probsPlot() const { return m_probs; }
    QLabel *caption() const { return m_caption; }

protected:
    void refresh() override;

private:
    void showPanel(HeatmapPlot *plot, const char *suffix);
    void showMask(const char *source);
    QString maskText(int row, int col) const;
    QString valueText(const char *suffix, const QString &what, int row, int col) const;
    void applyTheme();

    HeatmapPlot *m_scores = nullptr;
    HeatmapPlot *m_mask = nullptr;
    HeatmapPlot *m_probs = nullptr;
    QLabel *m_caption = nullptr;
};

} // namespace atlas
