#include "views/downsample.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace atlas {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int blockFor(int size, int maxCells)
{
    maxCells = std::max(1, maxCells);
    return size <= maxCells ? 1 : (size + maxCells - 1) / maxCells;
}

// Sums the non −∞ cells of rows [r0, r1) into per-pooled-column sums and counts.
void accumulateRows(const float *data, int cols, int r0, int r1, int blockCols, float *sum, int *count)
{
    for (int r = r0; r < r1; ++r) {
        const float *src = data + static_cast<size_t>(r) * cols;
        for (int c0 = 0, pc = 0; c0 < cols; c0 += blockCols, ++pc) {
            const int c1 = std::min(cols, c0 + blockCols);
            float s = 0.0f;
            int n = 0;
            for (int c = c0; c < c1; ++c) {
                const float v = src[c];
                if (v != kNegInf) {
                    s += v;
                    ++n;
                }
            }
            sum[pc] += s;
            count[pc] += n;
        }
    }
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
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    p.hasFinite = lo <= hi;
    p.minFinite = p.hasFinite ? lo : 0.0f;
    p.maxFinite = p.hasFinite ? hi : 0.0f;
}

} // namespace

Pooled downsample(const float *data, int rows, int cols, int maxRows, int maxCols)
{
    Pooled p;
    if (data == nullptr || rows <= 0 || cols <= 0)
        return p;
    p.blockRows = blockFor(rows, maxRows);
    p.blockCols = blockFor(cols, maxCols);
    p.rows = (rows + p.blockRows - 1) / p.blockRows;
    p.cols = (cols + p.blockCols - 1) / p.blockCols;
    p.values.resize(static_cast<size_t>(p.rows) * p.cols);

    if (p.blockRows == 1 && p.blockCols == 1) {
        std::memcpy(p.values.data(), data, p.values.size() * sizeof(float));
        findRange(p);
        return p;
    }
    std::vector<float> sum(static_cast<size_t>(p.cols));
    std::vector<int> count(static_cast<size_t>(p.cols));
    for (int pr = 0; pr < p.rows; ++pr) {
        std::fill(sum.begin(), sum.end(), 0.0f);
        std::fill(count.begin(), count.end(), 0);
        const int r0 = pr * p.blockRows;
        accumulateRows(data, cols, r0, std::min(rows, r0 + p.blockRows), p.blockCols, sum.data(), count.data());
        float *out = p.values.data() + static_cast<size_t>(pr) * p.cols;
        for (int pc = 0; pc < p.cols; ++pc)
            out[pc] = count[pc] > 0 ? sum[pc] / static_cast<float>(count[pc]) : kNegInf;
    }
    findRange(p);
    return p;
}

} // namespace atlas
