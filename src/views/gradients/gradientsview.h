#pragma once

#include "views/analysisplotview.h"

#include "gradients/gradients.h"

class QComboBox;
class QSpinBox;

namespace atlas {

// Gradients by depth (view kind "gradients"; Xiong et al. 2020): for the spec's model on its input, and for
// `baseline_model` on the same text, each block's ‖∂L/∂W‖ over its attention matrices (left) and its feed-forward's
// (right), as trained (solid) and at initialisation (dashed), on a log scale. Post-LN's gradients grow towards the
// last blocks at initialisation when drawn Xavier-uniform and deep; pre-LN's fall with depth. Over the plot, how the
// fresh weights are drawn and how many blocks the fresh twins have (spec keys init, fresh_blocks). The numbers are
// GradientsAnalysis's (gradients/gradients.h).
class GradientsView : public ResultPlotView<GradientsAnalysis>
{
    Q_OBJECT

public:
    explicit GradientsView(QWidget *parent = nullptr);

protected:
    QString draw(const GradientsAnalysis &result) override;
    QString pendingText() const override;

private:
    void drawPanel(int column, const GradientsAnalysis &a, bool feedForward);
    void syncControls();

    QComboBox *m_init;
    QSpinBox *m_blocks;
};

} // namespace atlas

namespace atlas::views::gradients {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::gradients
