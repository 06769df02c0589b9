#pragma once

#include "engine/attentiontrace.h"
#include "viewmodel/latestjob.h"
#include "views/view.h"

#include <cstdint>
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
    // The head's (score, capped score) pairs the cap panel draws (every k-th cell: about 4000), how far the scores
    // reach and how many of them the cap moved by more than a tenth (|s − c·tanh(s/c)| > |s| / 10); −1 when the
    // trace lacks them. A large head on demand is read a few dozen rows at a time on a worker.
    struct CapPoints
    {
        std::vector<double> scores, capped;
        double reach = 0;
        int64_t squashed = -1;
    };
    // Adds cells [first, first + n) of the head's scores `s` and capped scores `sc`, every `every`-th drawn.
    static void takeCapCells(
        CapPoints &points, const float *s, const float *sc, int64_t first, int64_t n, int64_t every);
    void showCap();
    void drawCap(const CapPoints &points);
    QString captionText() const;
    void applyTheme();

    HeatmapPlot *m_scores = nullptr;
    HeatmapPlot *m_mask = nullptr;
    HeatmapPlot *m_probs = nullptr;
    QCustomPlot *m_cap = nullptr;
    QCPTextElement *m_capTitle = nullptr;
    QLabel *m_caption = nullptr;
    int64_t m_squashed = -1; // the cap's count for the caption, once known
    // last: they wait in ~
    LatestJob<MaskCells> m_maskJob {[this](MaskCells mask) { adoptMask(mask); }};
    LatestJob<CapPoints> m_capJob {[this](CapPoints points) { drawCap(points); }};
};

} // namespace atlas

namespace atlas::views::mask {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::mask
