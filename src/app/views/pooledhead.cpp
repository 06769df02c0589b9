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
               int maxRows, int maxCols, const CellWindow &window, const std::atomic<bool> &cancel) {
        const int first = leading.empty() ? 0 : 1; // the keys' first column
        const CellWindow w = window.within(int(readout->queries()), int(readout->keys()) + first);
        const int blockRows = poolBlock(w.rows, maxRows), blockCols = poolBlock(w.cols, maxCols);
        PooledCells p = readout->pooled(stage, cells, head,
            {w.row0, w.row0 + w.rows, w.col0, w.col0 + w.cols, blockRows, blockCols, first}, &cancel);
        const int rows = int(p.grid.rows()), cols = int(p.grid.cols());
        for (int r = w.row0; w.col0 == 0 && r < w.row0 + w.rows && r < int(leading.size()); ++r) {
            // the leading column is column 0 of the window's first blocks
            p.sums[size_t((r - w.row0) / blockRows) * size_t(cols)] += leading[size_t(r)];
            p.counts[size_t((r - w.row0) / blockRows) * size_t(cols)] += 1.0f;
        }
        return pooledFromSums(std::move(p.sums), p.counts, rows, cols, blockRows, blockCols, w.row0, w.col0);
    };
}

} // namespace atlas
