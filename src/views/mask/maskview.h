#pragma once

#include "engine/attentiontrace.h"
#include "viewmodel/latestjob.h"
#include "views/view.h"

#include <memory>
#include <vector>

class QLabel;
class QCustomPlot;
class QCPTextElement;

namespace atlas {

class HeatmapPlot;

// How masking turns scores into probabilities, for one layer and head, side by side: the scores QKᵀ/√d before
// masking, the mask itself (0 where a query may attend a key, −∞ where not), and the probabilities after
// softmax, with the formula underneath. Each panel shows "not computed yet" until its operation has run. A model that
// soft-caps its scores (Gemma 2) gets a fourth panel: the cap c·tanh(s/c), with every score of the head on it.
class MaskView : public View
{
    Q_OBJECT

public:
    explicit MaskView(QWidget *parent = nullptr);

    HeatmapPlot *scoresPlot() const { return m_scores; }
    HeatmapPlot *maskPlot() const { return m_mask; }
    HeatmapPlot *probsPlot() const { return m_probs; }
    QLabel *caption() const { return m_caption; }
    QCustomPlot *capPlot() const { return m_cap; } // hidden unless the model soft-caps its scores
    bool drawing() const override;
    void finishDrawing() override;

protected:
    void refresh() override;

private:
    void showPanel(HeatmapPlot *plot, const char *suffix, ops::ScoreStage stage);
    // The mask's cells: 0 where allowed, −∞ where not (or why there are none).
    struct MaskCells
    {
        std::shared_ptr<std::vector<float>> cells;
        int tokens = 0; // queries
        int keys = 0;
        QString problem;
    };
    void showMask(const char *source);
    void adoptMask(const MaskCells &mask);
    QString maskText(int row, int col) const;
    QString cellNumber(const char *suffix, int row, int col) const; // the head's value there, formatted
    QString valueText(const char *suffix, const QString &what, int row, int col) const;
    // The scores as this model computes them ("QKᵀ/√d", "QKᵀ/√s + B" …), and what softmax reads before the mask:
    // the scores, or Gemma 2's soft-capped ones (attn.capped).
    QString scoresFormula() const;
    bool capped() const;
    // The cap's curve and the head's (score, capped score) pairs; returns how many scores it squashed by more than
    // a tenth (|s − c·tanh(s/c)| > |s| / 10), or −1 when the trace lacks them.
    int showCap();
    void applyTheme();

    HeatmapPlot *m_scores = nullptr;
    HeatmapPlot *m_mask = nullptr;
    HeatmapPlot *m_probs = nullptr;
    QCustomPlot *m_cap = nullptr;
    QCPTextElement *m_capTitle = nullptr;
    QLabel *m_caption = nullptr;
    LatestJob<MaskCells> m_maskJob {[this](MaskCells mask) { adoptMask(mask); }}; // last: waits in ~
};

} // namespace atlas

namespace atlas::views::mask {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::mask
