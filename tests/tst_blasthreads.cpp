// Behaviour on a busy machine. OpenBLAS gets as many threads as there are idle cores (util/blasthreads.h): a busy
// machine gets one thread, not two that wait for each other. The app's background threads run nicer than its
// window's thread (util/threadpriority.h), and so do the threads they start. parallelFor's threads wait in a pool
// between loops; loops in pieces share their work out as it goes. The packed matrix product shares its columns out
// over the cores and gives the same bits on one thread as on two.
#include "tensor/matrixproduct.h"
#include "tensor/packedtiles512.h"
#include "testbundle.h"
#include "util/blasthreads.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/threadpriority.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

using namespace atlas;

namespace {

// Each value of `values` drawn from the standard normal distribution.
void fillNormal(std::vector<float> &values, std::mt19937 &rng)
{
    std::normal_distribution<float> normal;
    for (float &x : values)
        x = normal(rng);
}

} // namespace

class TestBlasThreads : public QObject
{
    Q_OBJECT

private slots:
    void threadsFollowTheIdleCores()
    {
        QCOMPARE(blasThreadsFor(2, 0), 2); // an idle machine: every core
        QCOMPARE(blasThreadsFor(2, 1), 1); // one other runnable process on two cores
        QCOMPARE(blasThreadsFor(2, 2), 1); // the case measured in docs/benchmarks.md
        QCOMPARE(blasThreadsFor(2, 40), 1); // never fewer than one
        QCOMPARE(blasThreadsFor(8, 3), 5);
        QCOMPARE(blasThreadsFor(1, 0), 1);
        QCOMPARE(blasThreadsFor(4, -1), 4); // an unknown load counts as idle
    }

    // Against a double-precision sum, for every transposition; shapes that leave partial tiles (8 × 32) and cross
    // the 256-deep and 256-wide blocks; rows stored wider than the matrix (whose extra values stay as they were);
    // with and without accumulating (C's old NaNs must not show when not).
    void packedProductAgreesWithADoubleSum()
    {
        std::mt19937 rng(7);
        std::normal_distribution<float> normal;
        const auto shapes = std::vector<std::tuple<int64_t, int64_t, int64_t>> {
            {1, 1, 1}, {8, 16, 32}, {13, 300, 70}, {37, 257, 290}, {64, 513, 33}, {9, 5, 600}, {3, 0, 40}};
        for (const auto &[m, k, n] : shapes)
            for (const bool ta : {false, true})
                for (const bool tb : {false, true})
                    for (const bool accumulate : {false, true}) {
                        const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 3, ldc = n + 3;
                        std::vector<float> a(size_t((ta ? k : m) * lda)), b(size_t((tb ? n : k) * ldb));
                        std::vector<float> c(size_t(m * ldc), 7.0f);
                        fillNormal(a, rng);
                        fillNormal(b, rng);
                        for (int64_t i = 0; i < m; ++i)
                            for (int64_t j = 0; j < n; ++j)
                                c[size_t(i * ldc + j)] = accumulate ? normal(rng) : std::nanf("");
                        const std::vector<float> before = c;
                        packedMatrixProduct(c.data(), ldc, a.data(), lda, ta, b.data(), ldb, tb, m, k, n, accumulate);
                        for (int64_t i = 0; i < m; ++i)
                            for (int64_t j = 0; j < ldc; ++j) {
                                const float got = c[size_t(i * ldc + j)];
                                if (j >= n) {
                                    QCOMPARE(got, 7.0f);
                                    continue;
                                }
                                double sum = accumulate ? before[size_t(i * ldc + j)] : 0.0, size = std::abs(sum);
                                for (int64_t t = 0; t < k; ++t) {
                                    const double x = ta ? a[size_t(t * lda + i)] : a[size_t(i * lda + t)];
                                    const double y = tb ? b[size_t(j * ldb + t)] : b[size_t(t * ldb + j)];
                                    sum += x * y;
                                    size += std::abs(x * y);
                                }
                                QVERIFY2(std::abs(got - sum) <= 1e-6 * size + 1e-6,
                                    qPrintable(QString("m %1 k %2 n %3 ta %4 tb %5 acc %6 at (%7, %8): %9, not %10")
                                                   .arg(m)
                                                   .arg(k)
                                                   .arg(n)
                                                   .arg(ta)
                                                   .arg(tb)
                                                   .arg(accumulate)
                                                   .arg(i)
                                                   .arg(j)
                                                   .arg(got)
                                                   .arg(sum)));
                            }
                    }
    }

    // Each element is summed in one order whatever the threads: inside a parallelFor body the product runs on one
    // thread.
    void packedProductGivesTheSameBitsOnOneThread()
    {
        const int64_t m = 100, k = 700, n = 3000;
        std::mt19937 rng(3);
        std::vector<float> a(size_t(m * k)), b(size_t(n * k)), shared(size_t(m * n)), alone(size_t(m * n));
        fillNormal(a, rng);
        fillNormal(b, rng);
        packedMatrixProduct(shared.data(), n, a.data(), k, false, b.data(), k, true, m, k, n, false);
        parallelFor(2, 1, [&](int64_t begin, int64_t) {
            if (begin == 0)
                packedMatrixProduct(alone.data(), n, a.data(), k, false, b.data(), k, true, m, k, n, false);
        });
        QVERIFY(shared == alone);
    }

    // The AVX-512 tile compiled apart (for a build not for AVX-512 on a CPU with it) sums each element of C as the
    // plain loops do, over k in order with one fused multiply-add a step: the same bits, for A's rows in place and for
    // a packed panel, whole tiles and tiles at C's edge, written and added. Needs a CPU with AVX-512.
    void theAvx512TileSumsAsThePlainLoops()
    {
        __builtin_cpu_init();
        if (!__builtin_cpu_supports("avx512f"))
            QSKIP("this CPU has no AVX-512");
        constexpr int64_t rowsMax = avx512::kTileRows, colsMax = avx512::kTileCols, depth = 300, ldc = 40;
        std::mt19937 rng(5);
        std::vector<float> a(size_t(rowsMax * depth)), values(size_t(depth * colsMax)), panel(a.size()),
            start(size_t(rowsMax * ldc));
        fillNormal(a, rng);
        fillNormal(values, rng);
        // a B panel is 64-byte aligned, as the packed product's scratch buffers are
        const std::unique_ptr<float, decltype(&std::free)> aligned(
            static_cast<float *>(std::aligned_alloc(64, values.size() * sizeof(float))), &std::free);
        float *b = aligned.get();
        std::copy(values.begin(), values.end(), b);
        fillNormal(start, rng);
        for (int64_t t = 0; t < depth; ++t)
            for (int64_t r = 0; r < rowsMax; ++r)
                panel[size_t(t * rowsMax + r)] = a[size_t(r * depth + t)];
        const float *rows[rowsMax];
        for (int64_t r = 0; r < rowsMax; ++r)
            rows[r] = a.data() + r * depth;
        for (const auto &[tileRows, tileCols] : {std::pair<int64_t, int64_t> {8, 32}, {3, 17}})
            for (const bool add : {false, true}) {
                std::vector<float> expected = start;
                for (int64_t r = 0; r < tileRows; ++r)
                    for (int64_t j = 0; j < tileCols; ++j) {
                        float sum = 0;
                        for (int64_t t = 0; t < depth; ++t)
                            sum = std::fma(a[size_t(r * depth + t)], b[t * colsMax + j], sum);
                        float &out = expected[size_t(r * ldc + j)];
                        out = add ? out + sum : sum;
                    }
                std::vector<float> fromRows = start, fromPanel = start;
                avx512::tileFromRows(fromRows.data(), ldc, rows, b, depth, add, tileRows, tileCols);
                avx512::tileFromPanel(fromPanel.data(), ldc, panel.data(), b, depth, add, tileRows, tileCols);
                QVERIFY(fromRows == expected);
                QVERIFY(fromPanel == expected);
            }
    }

    // A product written into some columns of a wider matrix (a tile of a layer's output: packedWeightProduct) gives
    // the bits of the same product on its own, and leaves the other columns as they were; whichever path the build
    // takes (the packed kernel, the BLAS, Eigen), and below the packed kernel's smallest shapes.
    void aProductIntoColumnsOfAWiderMatrixIsTheSameProduct()
    {
        std::mt19937 rng(11);
        for (const auto &[m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>> {{37, 300, 70}, {3, 20, 9}})
            for (const bool accumulate : {false, true}) {
                const int64_t first = 5, ldc = n + 11;
                std::vector<float> a(size_t(m * k)), b(size_t(n * k)), wide(size_t(m * ldc)), alone(size_t(m * n));
                fillNormal(a, rng);
                fillNormal(b, rng);
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t j = 0; j < ldc; ++j)
                        wide[size_t(i * ldc + j)] = float(i + j);
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t j = 0; j < n; ++j)
                        alone[size_t(i * n + j)] = wide[size_t(i * ldc + first + j)];
                const std::vector<float> before = wide;
                const ConstMatrixMap am(a.data(), m, k), bm(b.data(), n, k);
                matrixProduct(wide.data() + first, ldc, am, false, bm, true, accumulate);
                MatrixMap cm(alone.data(), m, n);
                matrixProduct(cm, am, false, bm, true, accumulate);
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t j = 0; j < ldc; ++j) {
                        const float got = wide[size_t(i * ldc + j)];
                        if (j < first || j >= first + n)
                            QCOMPARE(got, before[size_t(i * ldc + j)]);
                        else
                            QCOMPARE(got, alone[size_t(i * n + j - first)]);
                    }
            }
    }

    void piecesCoverEveryIndexOnce()
    {
        for (const auto &[n, piece] : std::vector<std::pair<int64_t, int64_t>> {{1000, 7}, {5, 64}, {0, 3}, {64, 1}}) {
            std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
            std::atomic<int> calls {0};
            parallelForPieces(n, piece, [&, piece = piece](int64_t begin, int64_t end) {
                QVERIFY(end - begin <= piece && begin < end);
                ++calls;
                for (int64_t i = begin; i < end; ++i)
                    ++hits[size_t(i)];
            });
            for (const std::atomic<int> &h : hits)
                QCOMPARE(h.load(), 1);
            QCOMPARE(calls.load(), n == 0 ? 0 : n <= piece ? 1 : int((n + piece - 1) / piece));
        }
    }

    void aFailingBodyIsRethrownOnceEveryThreadHasFinished()
    {
        for (bool pieces : {false, true}) {
            std::atomic<int> finished {0};
            const auto body = [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i)
                    if (i == 3)
                        throw Error("index 3");
                ++finished;
            };
            try {
                if (pieces)
                    parallelForPieces(100, 1, body);
                else
                    parallelFor(100, 1, body);
                QFAIL("no exception");
            } catch (const Error &e) {
                QCOMPARE(QString(e.what()), QString("index 3"));
            }
            parallelFor(4, 1, [](int64_t, int64_t) {}); // the pool is free again
        }
    }

    void loopsFromSeveralThreadsAtOnceAllFinish()
    {
        std::vector<std::thread> callers;
        std::vector<int64_t> sums(3, 0);
        for (size_t c = 0; c < sums.size(); ++c)
            callers.emplace_back([&, c] {
                for (int loop = 0; loop < 200; ++loop) {
                    std::vector<int64_t> values(64, 0);
                    parallelFor(64, 1, [&](int64_t begin, int64_t end) {
                        for (int64_t i = begin; i < end; ++i)
                            values[size_t(i)] = i;
                    });
                    for (int64_t v : values)
                        sums[c] += v;
                }
            });
        for (std::thread &t : callers)
            t.join();
        for (int64_t sum : sums)
            QCOMPARE(sum, int64_t(200) * (63 * 64 / 2));
    }

    void adaptingIsSafeToCallOften()
    {
        for (int i = 0; i < 10000; ++i)
            adaptBlasThreadsToLoad(); // sampled at most every 200 ms: no cost worth measuring
    }

#ifdef __linux__
    void backgroundThreadsAndTheThreadsTheyStartRunNicer()
    {
        const int window = currentThreadNiceness();
        std::vector<int> seen(4, -100);
        int background = -100;
        std::thread job([&] {
            runAtBackgroundPriority();
            background = currentThreadNiceness();
            // parallelFor runs on a thread per core beyond this one: each reports its own value.
            parallelFor(int64_t(seen.size()), 1, [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i)
                    seen[size_t(i)] = currentThreadNiceness();
            });
        });
        job.join();
        QVERIFY(background >= backgroundNiceness);
        for (int n : seen)
            QVERIFY2(n >= backgroundNiceness, qPrintable(QString::number(n)));
        QCOMPARE(currentThreadNiceness(), window); // the calling thread is left alone
        parallelFor(int64_t(seen.size()), 1, [&](int64_t begin, int64_t end) { // and its loops' threads too
            for (int64_t i = begin; i < end; ++i)
                seen[size_t(i)] = currentThreadNiceness();
        });
        for (int n : seen)
            QCOMPARE(n, window);
    }

    void threadsThatExistAlreadyAreLowered()
    {
        const int window = currentThreadNiceness();
        std::mutex mutex;
        std::condition_variable wake;
        bool go = false;
        int before = -100, after = -100;
        std::thread started([&] { // stands for OpenBLAS's workers, started before the app's main()
            std::unique_lock lock(mutex);
            before = currentThreadNiceness();
            wake.wait(lock, [&] { return go; });
            after = currentThreadNiceness();
        });
        while (true) { // until it has read its value
            std::this_thread::yield();
            const std::lock_guard lock(mutex);
            if (before != -100)
                break;
        }
        lowerThreadsStartedSoFar();
        {
            const std::lock_guard lock(mutex);
            go = true;
        }
        wake.notify_one();
        started.join();
        QCOMPARE(before, window);
        QVERIFY(after >= backgroundNiceness);
        QCOMPARE(currentThreadNiceness(), window);
    }
#endif
};

QTEST_GUILESS_MAIN(TestBlasThreads)
#include "tst_blasthreads.moc"
