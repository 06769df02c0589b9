#pragma once

#include "views/heatmapplot.h"

#include <memory>
#include <vector>

namespace atlas {

// A head of a trace kept on demand drawn without making it: its readout when the head has more than
// HeatmapPlot::kPoolOnWorkerCells cells (then the plot pools it from its tiles), null otherwise (a whole trace, a
// small head, a layer not kept on demand, no such head).
std::shared_ptr<const AttentionReadout> largeHeadReadout(const ViewInput &input, int layer, int head);

// What pools head `head`'s `stage` of `readout` to the plot's size (AttentionReadout::pooled, `cells` counted), for
// HeatmapPlot::setPooledSource; `leading`, when given, is one more column before the keys (a row's sink share).
// The source keeps the readout and `trace`, whose tensors it reads, alive.
HeatmapPlot::PoolSource pooledHeadSource(std::shared_ptr<const AttentionReadout> readout,
    std::shared_ptr<const Trace> trace, ops::ScoreStage stage, ops::PoolCells cells, int head,
    std::vector<float> leading = {});

} // namespace atlas
