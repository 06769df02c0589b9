// attentionPattern: the pattern each fixed sparse kernel reports through its PatternVisitor against the dense mask
// the same kernel returns when it really attends, the work counts, the block-level grid, and T = 16384.
#include "attention/attentionpattern.h"
#include "tensortesting.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>

#include <sys/resource.h>

#include <random>

using namespace atlas;
using namespace atlas::testing;
using namespace atlas::attention;

namespace {

// The (T,T) mask the kernel itself returns when it attends random q, k, v with options.dense.
MatrixRM denseMask(const AttentionKernelSpec &spec, int64_t T, bool causal, const std::vector<int> &padding)
{
    const MatrixRM q = randomMatrix(T, 4, 1), k = randomMatrix(T, 4, 2), v = randomMatrix(T, 4, 3);
    AttentionOptions options;
    options.causal = causal;
    options.padding = padding;
    options.dense = true;
    const auto map = [](const MatrixRM &m) { return ConstMatrixMap(m.data(), m.rows(), m.cols()); };
    return attention_kernel_forward(spec, map(q), map(k), map(v), options).mask.matrix();
}

std::vector<AttentionKernelSpec> specs()
{
    const std::vector<std::pair<std::string, std::vector<std::string>>> table = {
        {"bigbird", {"block=2", "window_blocks=1", "global_blocks=1", "random_blocks=1"}},
        {"bigbird", {"block=3", "window_blocks=3", "global_blocks=0", "random_blocks=2", "seed=5"}},
        {"bigbird", {"block=4", "window_blocks=5", "global_blocks=2", "random_blocks=0"}},
        {"longformer", {"window=2"}},
        {"longformer", {"window=4", "dilation=2", "global=0,5"}},
        {"longformer", {"window=3", "dilation=3", "global=7"}},
        {"longformer", {"window=0", "global=1"}},
        {"strided", {"stride=1"}},
        {"strided", {"stride=3"}},
        {"strided", {"stride=5"}},
        {"fixed", {"stride=3", "summary=1"}},
        {"fixed", {"stride=4", "summary=0"}},
        {"fixed", {"stride=5", "summary=2"}},
        {"fixed", {"stride=1", "summary=1"}},
        {"swin", {"window=3", "shift=1"}},
        {"swin", {"window=2", "shift=1", "grid=4"}},
    };
    std::vector<AttentionKernelSpec> out;
    for (const auto &[kind, params] : table)
        out.push_back(parseAttentionKernelSpec(kind, params));
    return out;
}

long peakRssMiB()
{
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

} // namespace

class TestAttentionPattern : public QObject
{
    Q_OBJECT

private slots:
    void cellsEqualTheKernelsDenseMask()
    {
        int cases = 0;
        for (const AttentionKernelSpec &spec : specs())
            for (int64_t T : {8, 13, 37, 70}) // 70: more than one 64-query block
                for (bool causal : {false, true})
                    for (const std::vector<int> &padding : {std::vector<int> {}, std::vector<int> {1, int(T) - 1}}) {
                        const MatrixRM mask = denseMask(spec, T, causal, padding);
                        const PatternSummary p = attentionPattern(spec, T, causal, padding, int(T));
                        const QString what = QString::fromStdString(describeAttentionKernel(spec))
                            + QString(" T=%1 causal=%2 padding=%3").arg(T).arg(causal).arg(padding.size());
                        QCOMPARE(p.cells, int(T));
                        for (int64_t i = 0; i < T; ++i)
                            for (int64_t j = 0; j < T; ++j)
                                QVERIFY2(p.density[size_t(i * T + j)] == mask(i, j),
                                    qPrintable(what + QString(" at (%1,%2)").arg(i).arg(j)));
                        QCOMPARE(p.allowedPairs, int64_t(mask.sum()));
                        QVERIFY2(p.computedPairs >= p.allowedPairs, qPrintable(what));
                        QCOMPARE(p.fullPairs, causal ? T * (T + 1) / 2 : T * T);
                        ++cases;
                    }
        QCOMPARE(cases, 16 * 4 * 2 * 2);
    }

    // Σ|queries|·|keys| of the kernels' blocks, worked out by hand from each kernel's block layout.
    void computedPairsCountTheBlocksWork()
    {
        // One block of 8 queries with keys [0, 8): 64 scores for 8·3 − 2 allowed pairs.
        PatternSummary p = attentionPattern(parseAttentionKernelSpec("longformer", {"window=2"}), 8, false, {}, 8);
        QCOMPARE(p.computedPairs, int64_t(64));
        QCOMPARE(p.allowedPairs, int64_t(22));
        // The band (8 × 8) plus the two residue classes mod 2 (4 × 4 each).
        p = attentionPattern(parseAttentionKernelSpec("strided", {"stride=2"}), 8, false, {}, 8);
        QCOMPARE(p.computedPairs, int64_t(64 + 2 * 16));
        // Fixed, stride 4, summary 1: 8 queries over both 4-blocks, no summary column outside them.
        p = attentionPattern(parseAttentionKernelSpec("fixed", {"stride=4"}), 8, false, {}, 8);
        QCOMPARE(p.computedPairs, int64_t(64));
        QCOMPARE(p.allowedPairs, int64_t(2 * 16 + 2 * 4)); // the two 4-blocks, plus each row's other summary key
        // BigBird, block 4, one global block, no window beyond the own block, no random: T = 16 gives block 0's
        // 4 global queries × 16 keys, and query blocks 1…3 with keys {0, a}: 3 × 4 × 8.
        p = attentionPattern(
            parseAttentionKernelSpec("bigbird", {"block=4", "window_blocks=1", "global_blocks=1", "random_blocks=0"}),
            16, false, {}, 16);
        QCOMPARE(p.computedPairs, int64_t(4 * 16 + 3 * 4 * 8));
        QCOMPARE(p.allowedPairs, p.computedPairs); // no masked cell inside any block
    }

    void gridSumsToTheAllowedPairs()
    {
        for (const AttentionKernelSpec &spec : specs())
            for (bool causal : {false, true}) {
                const int64_t T = 70;
                const MatrixRM mask = denseMask(spec, T, causal, {3});
                const PatternSummary p = attentionPattern(spec, T, causal, {3}, 9); // 9 cells of 7 or 8 positions
                QCOMPARE(p.cells, 9);
                QCOMPARE(p.cellEdges.front(), int64_t(0));
                QCOMPARE(p.cellEdges.back(), T);
                int64_t sum = 0;
                double areaSum = 0;
                for (int r = 0; r < p.cells; ++r)
                    for (int c = 0; c < p.cells; ++c) {
                        const int64_t r0 = p.cellEdges[size_t(r)], r1 = p.cellEdges[size_t(r) + 1];
                        const int64_t c0 = p.cellEdges[size_t(c)], c1 = p.cellEdges[size_t(c) + 1];
                        const int64_t inMask = int64_t(mask.block(r0, c0, r1 - r0, c1 - c0).sum());
                        const int64_t cell = p.cellAllowed[size_t(r * p.cells + c)];
                        QCOMPARE(cell, inMask);
                        QCOMPARE(p.cellOf(r0), r);
                        QCOMPARE(p.allowed(r0, c0), cell > 0);
                        sum += cell;
                        areaSum += double(p.density[size_t(r * p.cells + c)]) * double((r1 - r0) * (c1 - c0));
                    }
                QCOMPARE(sum, p.allowedPairs);
                QVERIFY(std::abs(areaSum - double(p.allowedPairs)) < 1e-3 * double(p.allowedPairs) + 1e-6);
            }
    }

    void longSequencesAreExactWithoutATxTMatrix()
    {
        const int64_t T = 16384;
        const long before = peakRssMiB();
        // Longformer, window 512, not causal: row i allows keys within 256 on each side, clipped.
        PatternSummary p = attentionPattern(parseAttentionKernelSpec("longformer", {}), T, false, {}, 256);
        int64_t expected = 0;
        for (int64_t i = 0; i < T; ++i)
            expected += std::min<int64_t>(i, 256) + std::min<int64_t>(T - 1 - i, 256) + 1;
        QCOMPARE(p.allowedPairs, expected);
        QCOMPARE(p.cells, 256);
        QCOMPARE(p.density.size(), size_t(256 * 256));
        // Strided, stride 128, causal: the band of the past 128 keys plus every 128th key further back.
        p = attentionPattern(parseAttentionKernelSpec("strided", {}), T, true, {}, 256);
        expected = 0;
        for (int64_t i = 0; i < T; ++i)
            expected += std::min<int64_t>(i, 128) + 1 + std::max<int64_t>(0, i / 128 - 1); // j = i − 128k, k ≥ 2
        QCOMPARE(p.allowedPairs, expected);
        QCOMPARE(p.fullPairs, T * (T + 1) / 2);
        QCOMPARE(p.allowedFraction(), double(expected) / double(T * (T + 1) / 2));
        QVERIFY(p.allowedFraction() < 0.03);
        for (const char *kind : {"bigbird", "fixed"}) {
            p = attentionPattern(parseAttentionKernelSpec(kind, {}), T, false, {5, 100}, 512);
            QVERIFY(p.allowedPairs > 0 && p.allowedPairs < T * T / 10);
            QVERIFY(p.computedPairs >= p.allowedPairs);
        }
        // A (T,T) mask alone would be 256 MiB as bytes, 1024 MiB as floats (measured growth: about 25 MiB).
        QVERIFY2(peakRssMiB() - before < 150, qPrintable(QString("peak RSS grew %1 MiB").arg(peakRssMiB() - before)));
    }

    void operationsAreTwoMultiplyAddsPerHeadDimension()
    {
        const PatternSummary p = attentionPattern(parseAttentionKernelSpec("strided", {"stride=2"}), 8, true, {}, 8);
        QCOMPARE(p.operations(64), p.computedPairs * 128);
        QCOMPARE(p.fullOperations(64), int64_t(36 * 128));
    }

    void formulasCarryTheParameters()
    {
        QCOMPARE(patternFormula(parseAttentionKernelSpec("strided", {"stride=4"}), false),
            std::string("|i − j| ≤ 4  or  (i − j) mod 4 = 0"));
        QCOMPARE(patternFormula(parseAttentionKernelSpec("longformer", {"window=8", "dilation=2", "global=0,5"}), true),
            std::string("j ∈ G  or  i ∈ G  or  j = i + 2m with −8 ≤ m ≤ 0   (G = {0, 5}),  and j ≤ i"));
        QCOMPARE(patternFormula(parseAttentionKernelSpec("fixed", {"stride=8", "summary=2"}), false),
            std::string("⌊j/8⌋ = ⌊i/8⌋  or  j mod 8 ≥ 6"));
        QCOMPARE(patternFormula(parseAttentionKernelSpec("swin", {"window=8", "shift=4"}), false),
            std::string("⌊(i + 4) / 8⌋ = ⌊(j + 4) / 8⌋   (odd layers; the even ones unshifted)"));
        QVERIFY(patternFormula(parseAttentionKernelSpec("bigbird", {"block=16"}), false).find("⌊i/16⌋")
            != std::string::npos);
    }

    void kernelsWithoutAFixedPatternAreRefused()
    {
        QVERIFY_THROWS_EXCEPTION(Error, attentionPattern(parseAttentionKernelSpec("lsh", {}), 16, false, {}, 16));
        QVERIFY_THROWS_EXCEPTION(Error, attentionPattern(parseAttentionKernelSpec("full", {}), 16, false, {}, 16));
        QVERIFY_THROWS_EXCEPTION(Error, attentionPattern(parseAttentionKernelSpec("fixed", {}), 16, false, {}, 0));
        QVERIFY_THROWS_EXCEPTION(Error, attentionPattern(parseAttentionKernelSpec("fixed", {}), 16, false, {16}, 4));
        QVERIFY_THROWS_EXCEPTION(
            Error, attentionPattern(parseAttentionKernelSpec("longformer", {"global=20"}), 16, false, {}, 4));
    }
};

QTEST_GUILESS_MAIN(TestAttentionPattern)
#include "tst_attention_pattern.moc"
