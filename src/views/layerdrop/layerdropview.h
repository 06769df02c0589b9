#pragma once

#include "views/analysisplotview.h"

#include "layerdrop/layerdrop.h"

namespace atlas {

// LayerDrop (view kind "layerdrop"; Fan et al. 2019): whole blocks pruned at inference. For the spec's model and
// `baseline_model`, the task's held-out token accuracy against the blocks kept, keeping the first k (solid) or k
// spread evenly (dashed, Fan et al.'s "every other"). The numbers are LayerDropAnalysis's (layerdrop/layerdrop.h).
class LayerDropView : public ResultPlotView<LayerDropAnalysis>
{
    Q_OBJECT

public:
    explicit LayerDropView(QWidget *parent = nullptr);

protected:
    QString draw(const LayerDropAnalysis &result) override;
    QString pendingText() const override;
};

} // namespace atlas

namespace atlas::views::layerdrop {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::layerdrop
