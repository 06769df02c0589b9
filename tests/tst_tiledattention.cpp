// Attention a tile at a time (ops::tiled_attention_forward) against the whole-matrix path the traced forward runs
// (scores, soft-cap, mask, window, softmax or the sink's softmax, then A V), and every readout of the score path
// (ops::attention_tile) against the whole tensors, on each kind of mask the tiled path serves; and a head pooled for
// display from its tiles (ops::attention_pool) against the pooling of its whole stages.
#include "ops/ops.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace atlas;

namespace {

struct Case
{
    std::string name;
    int64_t heads = 2, T = 150, S = 150, d = 16;
    ops::ScoreRule rule;
    float spread = 1; // the queries' standard deviation: large makes rows nearly one-hot
};

Tensor gaussianTensor(Shape shape, std::mt19937 &rng, float scale)
{
    std::normal_distribution<float> normal(0.0f, scale);
    Tensor t(std::move(shape));
    for (float &v : t.values())
        v = normal(rng);
    return t;
}

// The stages as the traced forward computes them, whole.
struct Whole
{
    Tensor scores, capped, masked, probs, context, sinkShare;
};

Whole wholePath(const Tensor &q, const Tensor &k, const Tensor &v, const ops::ScoreRule &rule)
{
    const int64_t H = q.dim(0), T = q.dim(1), S = k.dim(1);
    Whole w;
    w.scores = Tensor({H, T, S});
    ops::attention_scores_forward(w.scores, q, k, rule.scale);
    w.capped = w.scores;
    if (rule.softcap > 0)
        ops::softcap_forward(w.capped, w.scores, rule.softcap);
    w.masked = Tensor({H, T, S});
    ops::attention_mask_forward(w.masked, w.capped, rule.causal, rule.padding);
    if (rule.window > 0)
        ops::sliding_window_mask(w.masked, rule.window);
    w.probs = Tensor({H, T, S});
    if (rule.sinks.empty()) {
        ops::softmax_forward(w.probs, w.masked);
    } else {
        Tensor sinks({H});
        std::copy(rule.sinks.begin(), rule.sinks.end(), sinks.data());
        w.sinkShare = Tensor({H, T});
        ops::sink_softmax_forward(w.probs, w.sinkShare, w.masked, sinks);
    }
    w.context = Tensor({H, T, v.dim(2)});
    ops::attention_context_forward(w.context, w.probs, v);
    return w;
}

// How far two correct float orders may put the outputs apart: a score's rounding error grows with its size, and a
// weight exp(s − ℓ) moves by that error relatively, so sharp scores (±150) allow ten times what mild ones (±5) do.
double toleranceFor(const Whole &w)
{
    double largest = 0;
    for (int64_t i = 0; i < w.scores.numel(); ++i)
        largest = std::max(largest, std::abs(double(w.scores.data()[i])));
    return 2e-6 * (10 + largest);
}

// A case's random queries, keys and values, its whole path and its tiled forward.
struct Run
{
    Run(const Case &c, unsigned seed)
    {
        std::mt19937 rng(seed);
        q = gaussianTensor({c.heads, c.T, c.d}, rng, c.spread);
        k = gaussianTensor({c.heads, c.S, c.d}, rng, 1);
        v = gaussianTensor({c.heads, c.S, c.d}, rng, 1);
        whole = wholePath(q, k, v, c.rule);
        context = Tensor({c.heads, c.T, c.d});
        lse = Tensor({c.heads, c.T});
        ops::tiled_attention_forward(context, lse, q, k, v, c.rule);
    }
    Tensor q, k, v, context, lse;
    Whole whole;
};

// |a − b| ≤ tolerance · (1 + |b|) everywhere, −∞ where the other is −∞. The message is built for a failing cell
// only: built for every cell, it was most of the test's time.
void compare(const float *a, const float *b, int64_t n, double tolerance, const std::string &what)
{
    for (int64_t i = 0; i < n; ++i) {
        const bool agree = std::isinf(b[i]) || std::isinf(a[i])
            ? a[i] == b[i]
            : std::abs(double(a[i]) - double(b[i])) <= tolerance * (1 + std::abs(double(b[i])));
        if (!agree)
            QFAIL((what + " at " + std::to_string(i) + ": " + std::to_string(a[i]) + " against " + std::to_string(b[i]))
                      .c_str());
    }
}

std::vector<Case> cases()
{
    std::vector<Case> all;
    all.push_back({"causal", 2, 150, 150, 16, {}, 1});
    Case window {"causal, a window of 37", 2, 150, 150, 16, {}, 1};
    window.rule.window = 37;
    all.push_back(window);
    Case longWindow {"causal, 700 tokens, a window of 300 (tiles skipped on both sides)", 2, 700, 700, 8, {}, 1};
    longWindow.rule.window = 300;
    all.push_back(longWindow);
    Case bidirectional {"bidirectional with padding", 3, 150, 150, 16, {}, 1};
    bidirectional.rule.causal = false;
    bidirectional.rule.padding = {0, 64, 70, 149};
    all.push_back(bidirectional);
    Case cross {"bidirectional, 40 queries × 300 keys", 2, 40, 300, 16, {}, 1};
    cross.rule.causal = false;
    cross.rule.padding = {299};
    all.push_back(cross);
    Case leftPadded {"causal, the first two keys padding (rows with no key)", 2, 90, 90, 16, {}, 1};
    leftPadded.rule.padding = {0, 1};
    all.push_back(leftPadded);
    Case capped {"soft-capped at 5, sharp scores", 2, 150, 150, 16, {}, 4};
    capped.rule.softcap = 5;
    capped.rule.window = 100;
    all.push_back(capped);
    Case sinks {"sinks (one large, one small) and a window", 2, 150, 150, 16, {}, 1};
    sinks.rule.sinks = {3.0f, -20.0f};
    sinks.rule.window = 50;
    all.push_back(sinks);
    Case sinkAlone {"sinks with rows that see no key", 2, 70, 70, 16, {}, 1};
    sinkAlone.rule.sinks = {0.5f, 40.0f};
    sinkAlone.rule.padding = {0};
    all.push_back(sinkAlone);
    Case sharp {"sharp scores (queries × 30)", 2, 200, 200, 32, {}, 30};
    all.push_back(sharp);
    all.push_back({"one token", 1, 1, 1, 4, {}, 1});
    for (Case &c : all)
        c.rule.scale = 1.0f / std::sqrt(float(c.d));
    return all;
}

} // namespace

class TestTiledAttention : public QObject
{
    Q_OBJECT

private slots:
    void contextAndLogSumExpEqualTheWholePath()
    {
        for (const Case &c : cases()) {
            const Run run(c, 7);
            const Tensor &context = run.context, &lse = run.lse;
            const Whole &w = run.whole;
            const double tolerance = toleranceFor(w);
            compare(context.data(), w.context.data(), context.numel(), tolerance, c.name + ": context");
            if (QTest::currentTestFailed())
                return;
            // ℓᵢ from the masked scores in double: the sink joins it
            for (int64_t h = 0; h < c.heads; ++h)
                for (int64_t i = 0; i < c.T; ++i) {
                    const float *row = w.masked.slice(h).data() + i * c.S;
                    double m = c.rule.sinks.empty() ? -INFINITY : double(c.rule.sinks[size_t(h)]);
                    for (int64_t j = 0; j < c.S; ++j)
                        m = std::max(m, double(row[j]));
                    double sum = c.rule.sinks.empty() ? 0 : std::exp(double(c.rule.sinks[size_t(h)]) - m);
                    for (int64_t j = 0; j < c.S; ++j)
                        sum += std::isinf(row[j]) ? 0 : std::exp(double(row[j]) - m);
                    const float expected = sum == 0 ? -INFINITY : float(m + std::log(sum));
                    compare(lse.data() + h * c.T + i, &expected, 1, tolerance,
                        c.name + ": log-sum-exp of head " + std::to_string(h) + " row " + std::to_string(i));
                    if (QTest::currentTestFailed())
                        return;
                    if (!c.rule.sinks.empty()) { // the sink's share, as the views compute it from ℓ
                        const float share = std::exp(c.rule.sinks[size_t(h)] - lse.data()[h * c.T + i]);
                        compare(&share, w.sinkShare.data() + h * c.T + i, 1, tolerance, c.name + ": sink share");
                    }
                }
        }
    }

    void everyStageReadsBackAsTheWholeTensor()
    {
        for (const Case &c : cases()) {
            const Run run(c, 11);
            const Tensor &q = run.q, &k = run.k, &lse = run.lse;
            const Whole &w = run.whole;
            const double tolerance = toleranceFor(w);
            Tensor pattern(w.masked.shape()); // the rule alone: 0 where seen, −∞ where masked
            for (int64_t i = 0; i < pattern.numel(); ++i)
                pattern.data()[i] = std::isinf(w.masked.data()[i]) ? -INFINITY : 0.0f;
            const std::pair<ops::ScoreStage, const Tensor *> stages[] = {{ops::ScoreStage::Scores, &w.scores},
                {ops::ScoreStage::Capped, &w.capped}, {ops::ScoreStage::Masked, &w.masked},
                {ops::ScoreStage::Probs, &w.probs}, {ops::ScoreStage::Mask, &pattern}};
            for (const auto &[stage, whole] : stages) {
                const std::string what = c.name + ": stage " + std::to_string(int(stage));
                for (int64_t h = 0; h < c.heads; ++h) {
                    std::vector<float> all(size_t(c.T * c.S));
                    ops::attention_tile(all.data(), c.S, stage, q, k, lse, c.rule, h, 0, c.T, 0, c.S);
                    compare(all.data(), whole->slice(h).data(), c.T * c.S, tolerance, what + ", whole head");
                    if (QTest::currentTestFailed())
                        return;
                    // a window inside, in a wider buffer: only its cells are written
                    const int64_t r0 = c.T / 3, r1 = std::max(r0 + 1, c.T - 5), c0 = c.S / 4,
                                  c1 = std::max(c0 + 1, c.S - 2), stride = c1 - c0 + 3;
                    std::vector<float> part(size_t((r1 - r0) * stride), 123.0f);
                    ops::attention_tile(part.data(), stride, stage, q, k, lse, c.rule, h, r0, r1, c0, c1);
                    for (int64_t r = r0; r < r1; ++r) {
                        compare(part.data() + (r - r0) * stride, whole->slice(h).data() + r * c.S + c0, c1 - c0,
                            tolerance, what + ", a window, row " + std::to_string(r));
                        QCOMPARE(part[size_t((r - r0) * stride + (c1 - c0))], 123.0f);
                        if (QTest::currentTestFailed())
                            return;
                    }
                }
            }
        }
    }

    void poolingFromTilesEqualsPoolingTheWholeHead()
    {
        // Blocks of several shapes (one cell, rows longer than a tile, partial last blocks), with the keys starting
        // at column 0 or 1, for each stage and choice of cells: each block's sum is the sum of the whole stage's
        // cells counted (those the mask lets their query see, or every one), and its count how many those are.
        const int blockShapes[][3] = {{1, 1, 0}, {7, 5, 0}, {3, 11, 1}, {70, 2, 0}, {150, 150, 1}};
        using ops::PoolCells;
        using ops::ScoreStage;
        const std::pair<ScoreStage, PoolCells> kinds[] = {{ScoreStage::Probs, PoolCells::Seen},
            {ScoreStage::Probs, PoolCells::All}, {ScoreStage::Scores, PoolCells::All},
            {ScoreStage::Capped, PoolCells::All}, {ScoreStage::Mask, PoolCells::Seen}};
        for (const Case &c : cases()) {
            const Run run(c, 13);
            const Whole &w = run.whole;
            const double tolerance = toleranceFor(w);
            for (const auto &[stage, which] : kinds) {
                const Tensor *whole = stage == ScoreStage::Probs ? &w.probs
                    : stage == ScoreStage::Scores                ? &w.scores
                    : stage == ScoreStage::Capped                ? &w.capped
                                                                 : nullptr; // the mask: 0 wherever counted
                for (const auto &[blockRows, blockCols, firstColumn] : blockShapes)
                    for (const bool inner : {false, true}) { // the whole head, or a window inside it
                        const int64_t width = c.S + firstColumn;
                        const ops::PoolGrid grid {inner ? c.T / 5 : 0, inner ? c.T - c.T / 7 : c.T,
                            inner ? width / 3 : 0, inner ? width - 2 : width, blockRows, blockCols, firstColumn};
                        if (grid.row0 >= grid.row1 || grid.col0 >= grid.col1)
                            continue;
                        const int64_t cols = grid.cols();
                        std::vector<float> sums(size_t(grid.rows() * cols), 5.0f), counts(sums.size(), 5.0f);
                        for (int64_t h = 0; h < c.heads; ++h) {
                            QVERIFY(ops::attention_pool(
                                sums.data(), counts.data(), stage, which, run.q, run.k, run.lse, c.rule, h, grid));
                            std::vector<double> expectedSums(sums.size(), 0.0), expectedCounts(sums.size(), 0.0),
                                largest(sums.size(), 0.0);
                            for (int64_t i = grid.row0; i < grid.row1; ++i)
                                for (int64_t j = std::max<int64_t>(0, grid.col0 - firstColumn);
                                     j < std::min(c.S, grid.col1 - firstColumn); ++j)
                                    if (which == PoolCells::All || !std::isinf(w.masked.slice(h).data()[i * c.S + j])) {
                                        const size_t cell = size_t(((i - grid.row0) / blockRows) * cols
                                            + (j + firstColumn - grid.col0) / blockCols);
                                        const double v = whole ? whole->slice(h).data()[i * c.S + j] : 0.0;
                                        expectedSums[cell] += v;
                                        largest[cell] += std::abs(v);
                                        expectedCounts[cell] += 1;
                                    }
                            const std::string what = c.name + ", stage " + std::to_string(int(stage)) + ", head "
                                + std::to_string(h) + ", blocks of " + std::to_string(blockRows) + " × "
                                + std::to_string(blockCols) + (inner ? ", a window" : "");
                            for (size_t cell = 0; cell < sums.size(); ++cell) {
                                if (counts[cell] != float(expectedCounts[cell]))
                                    QFAIL((what + ": count of block " + std::to_string(cell)).c_str());
                                if (std::abs(sums[cell] - expectedSums[cell])
                                    > tolerance * (expectedCounts[cell] + largest[cell]))
                                    QFAIL((what + ": sum of block " + std::to_string(cell) + " is "
                                        + std::to_string(sums[cell]) + ", not " + std::to_string(expectedSums[cell]))
                                              .c_str());
                            }
                        }
                    }
            }
        }
        // A set flag stops it part-way, and says so; what it cannot pool is refused.
        const Case first = cases()[0];
        const Run run(first, 13);
        const ops::ScoreRule &rule = first.rule;
        std::atomic<bool> cancel {true};
        std::vector<float> sums(150 * 150), counts(sums.size());
        const ops::PoolGrid cells {0, 150, 0, 150, 1, 1, 0};
        QVERIFY(!ops::attention_pool(sums.data(), counts.data(), ScoreStage::Probs, PoolCells::Seen, run.q, run.k,
            run.lse, rule, 0, cells, &cancel));
        const ops::PoolGrid noBlocks {0, 150, 0, 150, 0, 1, 0}, outside {0, 151, 0, 150, 1, 1, 0},
            empty {5, 5, 0, 150, 1, 1, 0};
        for (const ops::PoolGrid &grid : {noBlocks, outside, empty})
            QVERIFY_THROWS_EXCEPTION(Error,
                ops::attention_pool(sums.data(), counts.data(), ScoreStage::Probs, PoolCells::Seen, run.q, run.k,
                    run.lse, rule, 0, grid));
        QVERIFY_THROWS_EXCEPTION(Error,
            ops::attention_pool(sums.data(), counts.data(), ScoreStage::Scores, PoolCells::Seen, run.q, run.k, run.lse,
                rule, 0, cells));
        QVERIFY_THROWS_EXCEPTION(Error,
            ops::attention_pool(
                sums.data(), counts.data(), ScoreStage::Masked, PoolCells::All, run.q, run.k, run.lse, rule, 0, cells));
    }

    void masksMatchExactly()
    {
        // A masked cell reads back as −∞ and a probability of exactly 0, never as a tiny number.
        Case c = cases()[1];
        std::mt19937 rng(3);
        const Tensor q = gaussianTensor({c.heads, c.T, c.d}, rng, 1), k = gaussianTensor({c.heads, c.S, c.d}, rng, 1),
                     v = gaussianTensor({c.heads, c.S, c.d}, rng, 1);
        Tensor context({c.heads, c.T, c.d}), lse({c.heads, c.T});
        ops::tiled_attention_forward(context, lse, q, k, v, c.rule);
        std::vector<float> row(size_t(c.S));
        ops::attention_tile(row.data(), c.S, ops::ScoreStage::Probs, q, k, lse, c.rule, 1, 100, 101, 0, c.S);
        for (int64_t j = 0; j < c.S; ++j)
            if (j <= 100 - c.rule.window || j > 100)
                QCOMPARE(row[size_t(j)], 0.0f);
            else
                QVERIFY(row[size_t(j)] > 0.0f);
        double sum = 0;
        for (float p : row)
            sum += p;
        QVERIFY(std::abs(sum - 1.0) < 1e-5);
    }

    void refusesWhatItCannotRead()
    {
        std::mt19937 rng(1);
        const Tensor q = gaussianTensor({2, 5, 4}, rng, 1), k = gaussianTensor({2, 6, 4}, rng, 1), v = k;
        Tensor context({2, 5, 4}), lse({2, 5});
        ops::ScoreRule causal;
        QVERIFY_THROWS_EXCEPTION(Error, ops::tiled_attention_forward(context, lse, q, k, v, causal));
        ops::ScoreRule sinks;
        sinks.causal = false;
        sinks.sinks = {1.0f};
        QVERIFY_THROWS_EXCEPTION(Error, ops::tiled_attention_forward(context, lse, q, k, v, sinks));
        ops::ScoreRule outside;
        outside.causal = false;
        outside.padding = {6};
        QVERIFY_THROWS_EXCEPTION(Error, ops::tiled_attention_forward(context, lse, q, k, v, outside));
        std::vector<float> out(30);
        ops::ScoreRule open;
        open.causal = false;
        QVERIFY_THROWS_EXCEPTION(
            Error, ops::attention_tile(out.data(), 6, ops::ScoreStage::Scores, q, k, lse, open, 2, 0, 5, 0, 6));
        QVERIFY_THROWS_EXCEPTION(
            Error, ops::attention_tile(out.data(), 6, ops::ScoreStage::Scores, q, k, lse, open, 0, 0, 5, 0, 7));
    }
};

QTEST_APPLESS_MAIN(TestTiledAttention)
#include "tst_tiledattention.moc"
