#pragma once

#include <cstddef>
#include <limits>
#include <vector>

namespace atlas {

// A matrix, or a window of it, block-pooled for display: each pooled cell is the mean of a blockRows x blockCols block
// of the original (the last row/column of blocks may be partial). Original cell (r, c) lies in pooled cell
// ((r − row0) / blockRows, (c − col0) / blockCols).
struct Pooled
{
    std::vector<float> values; // [rows, cols], row-major
    int row0 = 0; // the original cell of pooled cell (0, 0): a zoomed window's first row and column
    int col0 = 0;
    int rows = 0;
    int cols = 0;
    int blockRows = 1;
    int blockCols = 1;
    bool hasFinite = false; // whether any pooled cell is finite (not −∞)
    bool hasNegInf = false; // whether any pooled cell is −∞
    bool hasZero = false; // whether any pooled cell is exactly 0 (of non-negative data: a block whose cells all are)
    float minFinite = 0.0f; // range of the finite pooled cells (0 when none)
    float maxFinite = 0.0f;
    float minPositive = std::numeric_limits<float>::max(); // the smallest cell above 0 (the largest float if none)

    float at(int row, int col) const { return values[static_cast<std::size_t>(row) * cols + col]; }
};

// Rows [row0, row0 + rows) × columns [col0, col0 + cols) of a matrix: what a zoomed plot shows.
struct CellWindow
{
    int row0 = 0, rows = 0, col0 = 0, cols = 0;

    // The window moved and cut to fit a rows × cols matrix; the whole matrix when it has no cells.
    CellWindow within(int matrixRows, int matrixCols) const;
    bool operator==(const CellWindow &) const = default;
};

// The block side that pools `size` cells into at most `maxCells`.
int poolBlock(int size, int maxCells);

// Mean-pools `data` ([rows, cols], row-major) to at most maxRows x maxCols cells. −∞ cells are left out of
// the mean; a block whose cells are all −∞ stays −∞. With rows <= maxRows and cols <= maxCols it is a copy.
// `masked` (same shape, may be null): a cell is −∞ wherever it is −∞, e.g. attention probabilities (0 where
// masked) drawn with the masked scores, so a masked cell never looks like a probability of 0.
Pooled downsample(const float *data, int rows, int cols, int maxRows, int maxCols, const float *masked = nullptr);
// The same for a window of the matrix.
Pooled downsample(
    const float *data, int rows, int cols, CellWindow window, int maxRows, int maxCols, const float *masked = nullptr);

// A pooling made elsewhere (a head computed from its tiles: AttentionReadout::pooled) from its blocks' sums and
// counts, [rows, cols]: each cell the mean, −∞ where a block counted nothing, as downsample's.
Pooled pooledFromSums(std::vector<float> sums, const std::vector<float> &counts, int rows, int cols, int blockRows,
    int blockCols, int row0 = 0, int col0 = 0);

} // namespace atlas
