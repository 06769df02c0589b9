#pragma once

#include "views/analysisplotview.h"

#include "memorydepth/memorydepth.h"

namespace atlas {

// Peak against depth (view kind "memory-depth"): models of the input model's shape at depths 1, 2, 4 … (spec
// "depth"), each trained one real step under plain backprop, checkpointing (k = ⌈√L⌉) and reversible blocks. Left,
// the measured peak activation bytes with the curves the lectures teach fitted to them: a + b·L, a + b·√L and a
// constant; right, the step times, the price of recomputation. The numbers are MemoryDepthAnalysis's.
class MemoryDepthView : public ResultPlotView<MemoryDepthAnalysis>
{
    Q_OBJECT

public:
    explicit MemoryDepthView(QWidget *parent = nullptr);

protected:
    QString draw(const MemoryDepthAnalysis &result) override;
    QString pendingText() const override;
    QString progressFormat() const override;
};

} // namespace atlas

namespace atlas::views::memorydepth {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::memorydepth
