#pragma once

#include "views/view.h"

class QComboBox;
class QCustomPlot;
class QCPTextElement;
class QLabel;

namespace atlas {

class HeatmapPlot;
struct PositionProfile;

// The model's positional encoding (the spec's "positions" analysis, positions/positionprofile.h). Left: what it adds
// or turns at each position (P for learned and sinusoidal, each RoPE pair's cos(t·θⱼ), the chosen head's score term
// for ALiBi, T5 and Shaw). Right: how two positions relate (the cosine similarity of P's rows, RoPE's factor of
// t − s). Below: each dimension pair's wavelength (sinusoidal, RoPE) or each head's bias against distance (ALiBi, T5),
// and for RoPE a query's first pairs and those of the key it attends to most, drawn on circles before and after
// their turn.
// The formula the engine computes heads the view. "Run with" (spec "positions") reruns the same weights under another
// encoding that needs no parameters, so every other tab shows what that changes.
class PositionsView : public View
{
    Q_OBJECT

public:
    explicit PositionsView(QWidget *parent = nullptr);

    QString formula() const;
    QString message() const; // shown instead of the plots, or empty
    HeatmapPlot *encodingPlot() const { return m_encoding; }
    HeatmapPlot *similarityPlot() const { return m_similarity; }
    QCustomPlot *curvesPlot() const { return m_curves; }
    QCustomPlot *rotationPlot() const { return m_rotation; }
    QComboBox *runWithBox() const { return m_runWith; }
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text);
    void drawCurves(const PositionProfile &p);
    void drawRotation(const PositionProfile &p);
    void keepRotationRound();

    QLabel *m_formula = nullptr;
    QWidget *m_controls = nullptr;
    QComboBox *m_runWith = nullptr;
    QLabel *m_message = nullptr;
    QWidget *m_plots = nullptr;
    HeatmapPlot *m_encoding = nullptr;
    HeatmapPlot *m_similarity = nullptr;
    QCustomPlot *m_curves = nullptr;
    QCPTextElement *m_curvesTitle = nullptr;
    double m_rotationWidth = 1;
    QCustomPlot *m_rotation = nullptr; // RoPE: a query's and a key's pairs on circles, before and after the turn
    QCPTextElement *m_rotationTitle = nullptr;
};

} // namespace atlas

namespace atlas::views::positions {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::positions
