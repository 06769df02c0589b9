#pragma once

#include "views/analysisplotview.h"

#include "positionloss/positionloss.h"

namespace atlas {

// The next token's loss against the tokens read before it (view kind "position-loss"), on a logarithmic axis of
// positions: a curve for each model's held-out windows of its task, and a dashed one for the Input box's text. The
// numbers are PositionLossAnalysis's (positionloss/positionloss.h); hovering a point names its bin and loss.
class PositionLossView : public ResultPlotView<PositionLossAnalysis>
{
    Q_OBJECT

public:
    explicit PositionLossView(QWidget *parent = nullptr);

protected:
    QString draw(const PositionLossAnalysis &result) override;
    QString pendingText() const override;
    QString progressFormat() const override;

private:
    void showPointAt(const QPoint &pos);
};

} // namespace atlas

namespace atlas::views::positionloss {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::positionloss
