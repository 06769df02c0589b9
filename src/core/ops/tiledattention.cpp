#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "ops/vectorexp.h"
#include "util/parallel.h"

#include <cmath>
#include <limits>

namespace atlas::ops {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// 64 queries × 256 keys: a tile's scores (64 KiB) and its rows of Q, K and V stay in a core's L2 for heads up to 128
// wide.
constexpr int64_t kQueryTile = 64, kKeyTile = 256;

void checkShapes(const Tensor &q, const Tensor &k, const ScoreRule &rule)
{
    if (q.rank() != 3 || k.rank() != 3 || q.dim(0) != k.dim(0) || q.dim(2) != k.dim(2))
        throw Error("tiled attention: queries " + q.shapeString() + " and keys " + k.shapeString()
            + " must be (H,T,d) and (H,S,d)");
    if (rule.causal && q.dim(1) != k.dim(1))
        throw Error("tiled attention: a causal mask needs as many keys as queries (queries " + q.shapeString()
            + ", keys " + k.shapeString() + ")");
    if (!rule.sinks.empty() && int64_t(rule.sinks.size()) != q.dim(0))
        throw Error("tiled attention: " + std::to_string(rule.sinks.size()) + " sink logits for "
            + std::to_string(q.dim(0)) + " heads");
    for (int p : rule.padding)
        if (p < 0 || p >= k.dim(1))
            throw Error("padding position " + std::to_string(p) + " is outside the input (0.."
                + std::to_string(k.dim(1) - 1) + ")");
}

// The keys every query sees, as flags, and whether any is padding in [c0, c1).
struct KeyFlags
{
    KeyFlags(const ScoreRule &rule, int64_t keys)
        : ok(size_t(keys), 1)
    {
        for (int p : rule.padding)
            ok[size_t(p)] = 0;
        prefix.assign(size_t(keys) + 1, 0);
        for (int64_t j = 0; j < keys; ++j)
            prefix[size_t(j) + 1] = prefix[size_t(j)] + (ok[size_t(j)] ? 0 : 1);
    }
    bool anyPadded(int64_t c0, int64_t c1) const { return prefix[size_t(c1)] != prefix[size_t(c0)]; }

    std::vector<unsigned char> ok;
    std::vector<int64_t> prefix;
};

// Scores of head h's query rows [r0, r0 + n) (q already scaled) against keys [c0, c1) into s (n × (c1 − c0), row
// stride `stride`), capped, then masked when `mask`.
void tileScores(float *s, int64_t stride, const MatrixRM &scaledQ, const Tensor &k, const ScoreRule &rule,
    const KeyFlags &keys, int64_t h, int64_t r0, int64_t c0, int64_t c1, ScoreStage upTo)
{
    const int64_t n = scaledQ.rows(), w = c1 - c0;
    Eigen::Map<MatrixRM, 0, Eigen::OuterStride<>> out(s, n, w, Eigen::OuterStride<>(stride));
    out.noalias() = scaledQ * k.slice(h).middleRows(c0, w).transpose();
    if (upTo == ScoreStage::Scores)
        return;
    if (rule.softcap > 0)
        for (int64_t r = 0; r < n; ++r)
            for (int64_t j = 0; j < w; ++j)
                out(r, j) = softcapped(out(r, j), rule.softcap);
    if (upTo == ScoreStage::Capped)
        return;
    const int64_t keyCount = int64_t(keys.ok.size());
    const bool padded = keys.anyPadded(c0, c1);
    for (int64_t r = 0; r < n; ++r) {
        const int64_t first = rule.firstKey(r0 + r), end = rule.endKey(r0 + r, keyCount);
        float *row = s + r * stride;
        for (int64_t j = c0; j < std::min(first, c1); ++j)
            row[j - c0] = kNegInf;
        for (int64_t j = std::max(end, c0); j < c1; ++j)
            row[j - c0] = kNegInf;
        if (padded)
            for (int64_t j = c0; j < c1; ++j)
                if (!keys.ok[size_t(j)])
                    row[j - c0] = kNegInf;
    }
}

} // namespace

void tiled_attention_forward(
    Tensor &context, Tensor &lse, const Tensor &q, const Tensor &k, const Tensor &v, const ScoreRule &rule)
{
    checkShapes(q, k, rule);
    const int64_t H = q.dim(0), T = q.dim(1), S = k.dim(1);
    requireShape(v, {H, S, v.dim(2)}, "tiled attention values");
    requireShape(context, {H, T, v.dim(2)}, "tiled attention context");
    requireShape(lse, {H, T}, "tiled attention log-sum-exp");
    const KeyFlags keys(rule, S);
    const int64_t blocks = (T + kQueryTile - 1) / kQueryTile, dv = v.dim(2);
    parallelForPieces(H * blocks, 1, [&](int64_t begin, int64_t end) {
        MatrixRM scaledQ, scores(kQueryTile, kKeyTile), acc;
        std::vector<float> runningMax(static_cast<size_t>(kQueryTile)), total(static_cast<size_t>(kQueryTile));
        for (int64_t item = begin; item < end; ++item) {
            const int64_t h = item / blocks, r0 = (item % blocks) * kQueryTile, n = std::min(kQueryTile, T - r0);
            scaledQ = rule.scale * q.slice(h).middleRows(r0, n);
            acc.setZero(n, dv);
            std::fill(runningMax.begin(), runningMax.end(), kNegInf);
            std::fill(total.begin(), total.end(), 0.0f);
            // Keys outside [first key of the first row, end of the last row) are masked for every row of the tile.
            const int64_t keyBegin = rule.firstKey(r0), keyEnd = rule.endKey(r0 + n - 1, S);
            for (int64_t c0 = keyBegin; c0 < keyEnd; c0 += kKeyTile) {
                const int64_t c1 = std::min(keyEnd, c0 + kKeyTile), w = c1 - c0;
                tileScores(scores.data(), kKeyTile, scaledQ, k, rule, keys, h, r0, c0, c1, ScoreStage::Masked);
                for (int64_t r = 0; r < n; ++r) {
                    float *row = scores.data() + r * kKeyTile;
                    const float tileMax = Eigen::Map<const Eigen::ArrayXf>(row, w).maxCoeff();
                    const float m = std::max(runningMax[size_t(r)], tileMax);
                    if (m == kNegInf) { // nothing seen yet in this row: its weights stay 0
                        std::fill(row, row + w, 0.0f);
                        continue;
                    }
                    const float rescale = std::exp(runningMax[size_t(r)] - m); // 0 when the row saw nothing before
                    const float sum = expShiftedMasked(row, row, w, m);
                    if (rescale != 1.0f) {
                        total[size_t(r)] *= rescale;
                        acc.row(r) *= rescale;
                    }
                    total[size_t(r)] += sum;
                    runningMax[size_t(r)] = m;
                }
                acc.noalias() += scores.topLeftCorner(n, w) * v.slice(h).middleRows(c0, w);
            }
            float *out = context.slice(h).data() + r0 * dv, *l = lse.data() + h * T + r0;
            for (int64_t r = 0; r < n; ++r) {
                float m = runningMax[size_t(r)], sum = total[size_t(r)];
                if (!rule.sinks.empty()) { // the sink's exp(z − m) joins the denominator and returns no value
                    const float z = rule.sinks[size_t(h)], shifted = std::max(m, z);
                    const float rescale = m == kNegInf ? 0.0f : std::exp(m - shifted);
                    sum = sum * rescale + std::exp(z - shifted);
                    acc.row(r) *= rescale;
                    m = shifted;
                }
                if (m == kNegInf || sum == 0.0f) {
                    std::fill_n(out + r * dv, dv, 0.0f);
                    l[r] = kNegInf;
                    continue;
                }
                Eigen::Map<RowVector>(out + r * dv, dv) = acc.row(r) / sum;
                l[r] = m + std::log(sum);
            }
        }
    });
}

void attention_tile(float *out, int64_t stride, ScoreStage stage, const Tensor &q, const Tensor &k, const Tensor &lse,
    const ScoreRule &rule, int64_t h, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    checkShapes(q, k, rule);
    const int64_t T = q.dim(1), S = k.dim(1);
    if (h < 0 || h >= q.dim(0) || r0 < 0 || r1 > T || r0 > r1 || c0 < 0 || c1 > S || c0 > c1 || stride < c1 - c0)
        throw Error("attention tile: head " + std::to_string(h) + ", rows [" + std::to_string(r0) + ", "
            + std::to_string(r1) + "), keys [" + std::to_string(c0) + ", " + std::to_string(c1) + ") outside "
            + q.shapeString() + " × " + k.shapeString());
    if (r0 == r1 || c0 == c1)
        return;
    if (stage == ScoreStage::Probs)
        requireShape(lse, {q.dim(0), T}, "attention tile log-sum-exp");
    const KeyFlags keys(rule, S);
    if (stage == ScoreStage::Mask) {
        for (int64_t r = r0; r < r1; ++r) {
            float *row = out + (r - r0) * stride;
            const int64_t first = rule.firstKey(r), end = rule.endKey(r, S);
            for (int64_t j = c0; j < c1; ++j)
                row[j - c0] = j >= first && j < end && keys.ok[size_t(j)] ? 0.0f : kNegInf;
        }
        return;
    }
    if (stage == ScoreStage::Masked || stage == ScoreStage::Probs) {
        // Only the keys some row of the tile may see need the product: outside them every cell is masked (−∞, or
        // probability 0). A causal head's tiles right of the diagonal, a window's left of it, cost nothing.
        int64_t lo = c1, hi = c0;
        for (int64_t r = r0; r < r1; ++r) {
            lo = std::min(lo, std::max(c0, rule.firstKey(r)));
            hi = std::max(hi, std::min(c1, rule.endKey(r, S)));
        }
        if (lo >= hi)
            lo = hi = c0;
        const float masked = stage == ScoreStage::Probs ? 0.0f : kNegInf;
        for (int64_t r = 0; r < r1 - r0; ++r) {
            float *row = out + r * stride;
            std::fill(row, row + (lo - c0), masked);
            std::fill(row + (hi - c0), row + (c1 - c0), masked);
        }
        if (lo == hi)
            return;
        out += lo - c0;
        c0 = lo;
        c1 = hi;
    }
    const MatrixRM scaledQ = rule.scale * q.slice(h).middleRows(r0, r1 - r0);
    tileScores(
        out, stride, scaledQ, k, rule, keys, h, r0, c0, c1, stage == ScoreStage::Probs ? ScoreStage::Masked : stage);
    if (stage != ScoreStage::Probs)
        return;
    for (int64_t r = 0; r < r1 - r0; ++r) {
        float *row = out + r * stride;
        const float l = lse.data()[h * T + r0 + r];
        if (l == kNegInf)
            std::fill(row, row + (c1 - c0), 0.0f);
        else
            expShiftedMasked(row, row, c1 - c0, l);
    }
}

bool attention_pool(float *sums, float *counts, ScoreStage stage, PoolCells cells, const Tensor &q, const Tensor &k,
    const Tensor &lse, const ScoreRule &rule, int64_t h, const PoolGrid &grid, const std::atomic<bool> *cancel)
{
    checkShapes(q, k, rule);
    const int64_t T = q.dim(1), S = k.dim(1), blockRows = grid.blockRows, blockCols = grid.blockCols;
    const bool unmasked = stage == ScoreStage::Scores || stage == ScoreStage::Capped;
    if (h < 0 || h >= q.dim(0) || blockRows < 1 || blockCols < 1 || grid.firstColumn < 0 || grid.row0 < 0
        || grid.row1 > T || grid.row0 >= grid.row1 || grid.col0 < 0 || grid.col1 > S + grid.firstColumn
        || grid.col0 >= grid.col1 || stage == ScoreStage::Masked || (unmasked && cells == PoolCells::Seen))
        throw Error("pooled attention: head " + std::to_string(h) + " of " + std::to_string(q.dim(0)) + ", rows ["
            + std::to_string(grid.row0) + ", " + std::to_string(grid.row1) + ") of " + std::to_string(T) + ", columns ["
            + std::to_string(grid.col0) + ", " + std::to_string(grid.col1) + ") with the keys from "
            + std::to_string(grid.firstColumn) + ", blocks of " + std::to_string(blockRows) + " × "
            + std::to_string(blockCols) + ", stage " + std::to_string(int(stage))
            + (cells == PoolCells::Seen ? " (the cells seen)" : " (every cell)"));
    if (stage == ScoreStage::Probs)
        requireShape(lse, {q.dim(0), T}, "pooled attention log-sum-exp");
    const int64_t pooledRows = grid.rows(), pooledCols = grid.cols();
    std::fill_n(sums, pooledRows * pooledCols, 0.0f);
    std::fill_n(counts, pooledRows * pooledCols, 0.0f);
    // The keys in the window: [keyLo, keyHi); key j's column in the window is j + firstColumn − col0.
    const int64_t keyLo = std::max<int64_t>(0, grid.col0 - grid.firstColumn),
                  keyHi = std::min(S, grid.col1 - grid.firstColumn), shift = grid.firstColumn - grid.col0;
    if (keyLo >= keyHi)
        return true;
    const KeyFlags keys(rule, S);
    std::vector<float> seen(static_cast<size_t>(S)); // 1 for a key no padding hides
    for (int64_t j = 0; j < S; ++j)
        seen[size_t(j)] = keys.ok[size_t(j)] || cells == PoolCells::All ? 1.0f : 0.0f;
    const int64_t width = keyHi - keyLo;
    std::atomic<bool> stopped {false};
    // Pooled rows in groups of about a tile's rows, so that short blocks still make products of kQueryTile queries;
    // each group's rows against kKeyTile keys at a time, as the forward.
    const int64_t group = std::max<int64_t>(1, kQueryTile / blockRows);
    parallelForPieces(pooledRows, group, [&](int64_t begin, int64_t end) {
        MatrixRM scaledQ, scores(kQueryTile, kKeyTile);
        std::vector<float> columnSum, columnCount; // [pooled row of the group, key − keyLo]
        for (int64_t pr0 = begin; pr0 < end; pr0 += group) {
            if (cancel && cancel->load(std::memory_order_relaxed)) {
                stopped = true;
                return;
            }
            const int64_t pr1 = std::min(end, pr0 + group), rowBegin = grid.row0 + pr0 * blockRows,
                          rowEnd = std::min(grid.row1, grid.row0 + pr1 * blockRows);
            columnSum.assign(size_t((pr1 - pr0) * width), 0.0f);
            columnCount.assign(columnSum.size(), 0.0f);
            for (int64_t r0 = rowBegin; r0 < rowEnd; r0 += kQueryTile) {
                const int64_t n = std::min(kQueryTile, rowEnd - r0);
                // The keys a cell of these rows may be counted at: every key, or those some row sees.
                const bool every = cells == PoolCells::All;
                const int64_t keyBegin = every ? keyLo : std::max(keyLo, rule.firstKey(r0)),
                              keyEnd = every ? keyHi : std::min(keyHi, rule.endKey(r0 + n - 1, S));
                if (stage != ScoreStage::Mask && keyBegin < keyEnd)
                    scaledQ = rule.scale * q.slice(h).middleRows(r0, n);
                for (int64_t c0 = keyBegin; c0 < keyEnd; c0 += kKeyTile) {
                    const int64_t c1 = std::min(keyEnd, c0 + kKeyTile);
                    if (stage != ScoreStage::Mask)
                        tileScores(scores.data(), kKeyTile, scaledQ, k, rule, keys, h, r0, c0, c1,
                            unmasked ? stage : ScoreStage::Masked);
                    for (int64_t r = 0; r < n; ++r) {
                        const size_t at = size_t(((r0 + r - grid.row0) / blockRows - pr0) * width);
                        float *sum = columnSum.data() + at, *count = columnCount.data() + at; // [j − keyLo]
                        float *row = scores.data() + r * kKeyTile; // row[j − c0]: key j's cell
                        if (every)
                            for (int64_t j = c0; j < c1; ++j)
                                count[j - keyLo] += 1.0f;
                        const int64_t first = unmasked ? c0 : std::max(c0, rule.firstKey(r0 + r)),
                                      last = unmasked ? c1 : std::min(c1, rule.endKey(r0 + r, S));
                        if (first >= last)
                            continue;
                        if (!every)
                            for (int64_t j = first; j < last; ++j) // a padded key is not seen
                                count[j - keyLo] += seen[size_t(j)];
                        if (stage == ScoreStage::Mask)
                            continue;
                        if (stage == ScoreStage::Probs) {
                            const float l = lse.data()[h * T + r0 + r];
                            if (l == kNegInf)
                                continue;
                            expShiftedMasked(row + (first - c0), row + (first - c0), last - first, l); // padded: 0
                        }
                        for (int64_t j = first; j < last; ++j)
                            sum[j - keyLo] += row[j - c0];
                    }
                }
            }
            for (int64_t pr = pr0; pr < pr1; ++pr) {
                const float *sum = columnSum.data() + (pr - pr0) * width,
                            *count = columnCount.data() + (pr - pr0) * width;
                float *sumRow = sums + pr * pooledCols, *countRow = counts + pr * pooledCols;
                for (int64_t j = keyLo; j < keyHi; ++j) {
                    const int64_t pc = (j + shift) / blockCols;
                    sumRow[pc] += sum[j - keyLo];
                    countRow[pc] += count[j - keyLo];
                }
            }
        }
    });
    return !stopped;
}

} // namespace atlas::ops
