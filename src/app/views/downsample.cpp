#include "views/downsample.h"

#include <algorithm>
#include <limits>

namespace atlas {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Adds the rows [r0, r1) (of `stride` floats each) column by column, `width` columns, into sum and count, leaving −∞
// cells out. Branch-free, so the compiler vectorises it; the blocks are summed afterwards.
void accumulateRows(
    const float *data, const float *masked, int stride, int width, int r0, int r1, float *sum, float *count)
{
    for (int r = r0; r < r1; ++r) {
        const float *src = data + static_cast<size_t>(r) * stride;
        const float *mask = masked ? masked + static_cast<size_t>(r) * stride : src;
        for (int c = 0; c < width; ++c) {
            const bool finite = src[c] != kNegInf && mask[c] != kNegInf;
            sum[c] += finite ? src[c] : 0.0f;
            count[c] += finite ? 1.0f : 0.0f;
        }
    }
}

float blockMean(float sum, float count)
{
    return count > 0.0f ? sum / count : kNegInf;
}

void findRange(Pooled &p)
{
    float lo = std::numeric_limits<float>::infinity();
    float hi = -lo;
    for (float v : p.values) {
        if (v == kNegInf) {
            p.hasNegInf = true;
            continue;
        }
        p.hasZero = p.hasZero || v == 0.0f;
        if (v > 0.0f)
            p.minPositive = std::min(p.minPositive, v);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    p.hasFinite = lo <= hi;
    p.minFinite = p.hasFinite ? lo : 0.0f;
    p.maxFinite = p.hasFinite ? hi : 0.0f;
}

} // namespace

CellWindow CellWindow::within(int matrixRows, int matrixCols) const
{
    if (rows <= 0 || cols <= 0)
        return {0, matrixRows, 0, matrixCols};
    CellWindow w;
    w.rows = std::min(rows, matrixRows);
    w.cols = std::min(cols, matrixCols);
    w.row0 = std::clamp(row0, 0, matrixRows - w.rows);
    w.col0 = std::clamp(col0, 0, matrixCols - w.cols);
    return w;
}

int poolBlock(int size, int maxCells)
{
    maxCells = std::max(1, maxCells);
    return size <= maxCells ? 1 : (size + maxCells - 1) / maxCells;
}

Pooled downsample(const float *data, int rows, int cols, int maxRows, int maxCols, const float *masked)
{
    return downsample(data, rows, cols, {0, rows, 0, cols}, maxRows, maxCols, masked);
}

Pooled downsample(
    const float *data, int rows, int cols, CellWindow window, int maxRows, int maxCols, const float *masked)
{
    Pooled p;
    window = window.within(rows, cols);
    if (data == nullptr || window.rows <= 0 || window.cols <= 0)
        return p;
    p.row0 = window.row0;
    p.col0 = window.col0;
    p.blockRows = poolBlock(window.rows, maxRows);
    p.blockCols = poolBlock(window.cols, maxCols);
    p.rows = (window.rows + p.blockRows - 1) / p.blockRows;
    p.cols = (window.cols + p.blockCols - 1) / p.blockCols;
    p.values.resize(static_cast<size_t>(p.rows) * p.cols);
    // The window's first cell, and its rows cols apart.
    const size_t offset = static_cast<size_t>(window.row0) * cols + window.col0;
    data += offset;
    if (masked != nullptr)
        masked += offset;
    std::vector<float> sum(static_cast<size_t>(window.cols));
    std::vector<float> count(static_cast<size_t>(window.cols));
    for (int pr = 0; pr < p.rows; ++pr) {
        std::fill(sum.begin(), sum.end(), 0.0f);
        std::fill(count.begin(), count.end(), 0.0f);
        const int r0 = pr * p.blockRows;
        accumulateRows(
            data, masked, cols, window.cols, r0, std::min(window.rows, r0 + p.blockRows), sum.data(), count.data());
        float *out = p.values.data() + static_cast<size_t>(pr) * p.cols;
        for (int pc = 0; pc < p.cols; ++pc) {
            const int c0 = pc * p.blockCols;
            const int c1 = std::min(window.cols, c0 + p.blockCols);
            float s = 0.0f;
            float n = 0.0f;
            for (int c = c0; c < c1; ++c) {
                s += sum[static_cast<size_t>(c)];
                n += count[static_cast<size_t>(c)];
            }
            out[pc] = blockMean(s, n);
        }
    }
    findRange(p);
    return p;
}

Pooled pooledFromSums(std::vector<float> sums, const std::vector<float> &counts, int rows, int cols, int blockRows,
    int blockCols, int row0, int col0)
{
    Pooled p;
    if (rows <= 0 || cols <= 0 || sums.size() != size_t(rows) * size_t(cols) || counts.size() != sums.size())
        return p;
    p.rows = rows;
    p.cols = cols;
    p.blockRows = blockRows;
    p.blockCols = blockCols;
    p.row0 = row0;
    p.col0 = col0;
    p.values = std::move(sums);
    for (size_t i = 0; i < p.values.size(); ++i)
        p.values[i] = blockMean(p.values[i], counts[i]);
    findRange(p);
    return p;
}

} // namespace atlas
