#include "views/downsample.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace atlas {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Adds the rows [r0, r1) column by column into sum and count, leaving −∞ cells out. Branch-free, so the
// compiler vectorises it; the blocks are summed afterwards.
void accumulateRows(const float *data, const float *masked, int cols, int r0, int r1, float *sum, float *count)
{
    for (int r = r0; r < r1; ++r) {
        const float *src = data + static_cast<size_t>(r) * cols;
        const float *mask = masked ? masked + static_cast<size_t>(r) * cols : src;
        for (int c = 0; c < cols; ++c) {
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

int poolBlock(int size, int maxCells)
{
    maxCells = std::max(1, maxCells);
    return size <= maxCells ? 1 : (size + maxCells - 1) / maxCells;
}

Pooled downsample(const float *data, int rows, int cols, int maxRows, int maxCols, const float *masked)
{
    Pooled p;
    if (data == nullptr || rows <= 0 || cols <= 0)
        return p;
    p.blockRows = poolBlock(rows, maxRows);
    p.blockCols = poolBlock(cols, maxCols);
    p.rows = (rows + p.blockRows - 1) / p.blockRows;
    p.cols = (cols + p.blockCols - 1) / p.blockCols;
    p.values.resize(static_cast<size_t>(p.rows) * p.cols);

    if (p.blockRows == 1 && p.blockCols == 1) {
        std::memcpy(p.values.data(), data, p.values.size() * sizeof(float));
        if (masked != nullptr)
            for (size_t i = 0; i < p.values.size(); ++i)
                if (masked[i] == kNegInf)
                    p.values[i] = kNegInf;
        findRange(p);
        return p;
    }
    std::vector<float> sum(static_cast<size_t>(cols));
    std::vector<float> count(static_cast<size_t>(cols));
    for (int pr = 0; pr < p.rows; ++pr) {
        std::fill(sum.begin(), sum.end(), 0.0f);
        std::fill(count.begin(), count.end(), 0.0f);
        const int r0 = pr * p.blockRows;
        accumulateRows(data, masked, cols, r0, std::min(rows, r0 + p.blockRows), sum.data(), count.data());
        float *out = p.values.data() + static_cast<size_t>(pr) * p.cols;
        for (int pc = 0; pc < p.cols; ++pc) {
            const int c0 = pc * p.blockCols;
            const int c1 = std::min(cols, c0 + p.blockCols);
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

Pooled pooledFromSums(
    std::vector<float> sums, const std::vector<float> &counts, int rows, int cols, int blockRows, int blockCols)
{
    Pooled p;
    if (rows <= 0 || cols <= 0 || sums.size() != size_t(rows) * size_t(cols) || counts.size() != sums.size())
        return p;
    p.rows = rows;
    p.cols = cols;
    p.blockRows = blockRows;
    p.blockCols = blockCols;
    p.values = std::move(sums);
    for (size_t i = 0; i < p.values.size(); ++i)
        p.values[i] = blockMean(p.values[i], counts[i]);
    findRange(p);
    return p;
}

} // namespace atlas
