#pragma once

#include "views/analysisplotview.h"

#include "steps/steps.h"

namespace atlas {

// A Universal Transformer's block applied 1 … S times (view kind "steps"): on the left the task's held-out accuracy at
// each step count, the trained count marked; on the right how far each application moves the input's residual
// stream. One curve per model (the spec's and `baseline_model`). The numbers are StepsAnalysis's (steps/steps.h).
class StepsView : public ResultPlotView<StepsAnalysis>
{
    Q_OBJECT

public:
    explicit StepsView(QWidget *parent = nullptr);

protected:
    QString draw(const StepsAnalysis &result) override;
    QString pendingText() const override;
    QString progressFormat() const override;

private:
    void drawAccuracy(const StepsAnalysis &a);
    void drawChange(const StepsAnalysis &a);
};

} // namespace atlas

namespace atlas::views::steps {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::steps
