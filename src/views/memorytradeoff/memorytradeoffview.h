#pragma once

#include "views/analysisplotview.h"

#include "memorytradeoff/memorytradeoff.h"

namespace atlas {

// Checkpointing's trade-off (view kind "memory-tradeoff"): a model of the input model's shape at depth L (spec
// "depth"; 0 = its own), one real training step with checkpoints every k blocks for k = 1 … L, each a point of peak
// activation memory against step time, ⌈√L⌉ (the default, Chen et al.'s choice) ringed, plain backprop and
// reversible blocks beside them. The numbers are MemoryTradeoffAnalysis's.
class MemoryTradeoffView : public ResultPlotView<MemoryTradeoffAnalysis>
{
    Q_OBJECT

public:
    explicit MemoryTradeoffView(QWidget *parent = nullptr);

protected:
    QString draw(const MemoryTradeoffAnalysis &result) override;
    QString pendingText() const override;
    QString progressFormat() const override;
};

} // namespace atlas

namespace atlas::views::memorytradeoff {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::memorytradeoff
