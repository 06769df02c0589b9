#include "views/pooledhead.h"

namespace atlas {

std::shared_ptr<const AttentionReadout> largeHeadReadout(const ViewInput &input, int layer, int head)
{
    std::shared_ptr<const AttentionReadout> readout = findAttentionReadout(input, layer);
    if (!readout || head < 0 || head >= readout->heads()
        || readout->queries() * readout->keys() <= HeatmapPlot::kPoolOnWorkerCells)
        return nullptr;
    return readout;
}

HeatmapPlot::PoolSource pooledHeadSource(std::shared_ptr<const AttentionReadout> readout,
    std::shared_ptr<const Trace> trace, ops::ScoreStage stage, ops::PoolCells cells, int head,
    std::vector<float> leading)
{
    return [readout = std::move(readout), trace = std::move(trace), stage, cells, head, leading = std::move(leading)](
               int maxRows, int maxCols, const std::atomic<bool> &cancel) {
        const int rows = int(readout->queries()), cols = int(readout->keys()) + (leading.empty() ? 0 : 1);
        PooledCells p = readout->pooled(
            stage, cells, head, poolBlock(rows, maxRows), poolBlock(cols, maxCols), leading.empty() ? 0 : 1, &cancel);
        for (size_t r = 0; r < leading.size(); ++r) { // the leading column is column 0 of the first blocks
            p.sums[(r / size_t(p.blockRows)) * size_t(p.cols)] += leading[r];
            p.counts[(r / size_t(p.blockRows)) * size_t(p.cols)] += 1.0f;
        }
        return pooledFromSums(std::move(p.sums), p.counts, p.rows, p.cols, p.blockRows, p.blockCols);
    };
}

} // namespace atlas
