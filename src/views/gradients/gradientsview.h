#pragma once

#include "views/analysisplotview.h"

#include "gradients/gradients.h"

namespace atlas {

// Gradients by depth (view kind "gradients"; Xiong et al. 2020): for the spec's model on its input, and for
// `baseline_model` on the same text, each block's ‖∂L/∂W‖ over its attention matrices (left) and its feed-forward's
// (right), as trained (solid) and at initialisation (dashed), on a log scale. Post-LN's gradients grow towards the
// last blocks at initialisation; pre-LN's stay level. The numbers are GradientsAnalysis's (gradients/gradients.h).
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
};

} // namespace atlas

namespace atlas::views::gradients {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::gradients
