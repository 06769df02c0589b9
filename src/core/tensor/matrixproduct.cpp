#include "tensor/matrixproduct.h"

#include "tensor/buffercache.h"
#include "tensor/packedtiles512.h"
#include "tensor/transposerows.h"
#include "util/blasthreads.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/sanitizers.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace atlas {

namespace {

// The register tile: kRows × kCols of C in 16 vectors of 16 floats, one AVX-512 register each.
constexpr int64_t kRows = 8, kCols = 32;
// k is taken kDepth at a time (a B panel of kDepth × kCols, 32 KiB, stays in L1), and the columns kWidth at a time
// (a packed B block of 256 KiB in L2).
constexpr int64_t kDepth = 256, kWidth = 256;
// The largest packed copy of A matrixProduct makes.
constexpr int64_t kPackedALimit = int64_t(64) << 20;
static_assert(kRows == avx512::kTileRows && kCols == avx512::kTileCols);

// Whether the tile compiled apart for AVX-512 runs here: always in a build for AVX-512, else where the CPU has it.
// ATLAS_AVX512_TILES=off keeps the plain loops in a build not for AVX-512 (to compare the two).
bool cpuRunsAvx512Tiles()
{
#if defined(__AVX512F__)
    return true;
#else
    static const bool runs = [] {
        const char *asked = std::getenv("ATLAS_AVX512_TILES");
        if (asked && std::string(asked) == "off")
            return false;
        __builtin_cpu_init();
        return bool(__builtin_cpu_supports("avx512f"));
    }();
    return runs;
#endif
}

// Aᵀ's rows [r0, r0 + kRows) as a panel (k, kRows), rows past m as zeros: Aᵀ(i, t) = A(t, i), each t reading
// kRows neighbours.
void packTransposedRows(float *panel, const float *a, int64_t lda, int64_t r0, int64_t m, int64_t k)
{
    const int64_t rows = std::min(kRows, m - r0);
    for (int64_t t = 0; t < k; ++t) {
        const float *src = a + t * lda + r0;
        for (int64_t r = 0; r < kRows; ++r)
            panel[t * kRows + r] = r < rows ? src[r] : 0.0f;
    }
}

// op(B)'s block (rows [p0, p0 + depth), columns [j0, j0 + width)) as panels (depth, kCols), columns past the block
// as zeros.
void packColumns(
    float *panels, const float *b, int64_t ldb, bool transposed, int64_t p0, int64_t depth, int64_t j0, int64_t width)
{
    const int64_t count = (width + kCols - 1) / kCols;
    if (!transposed) { // each row of the block read once, in order: the weights come from memory here
        for (int64_t t = 0; t < depth; ++t) {
            const float *src = b + (p0 + t) * ldb + j0;
            for (int64_t s = 0; s < count; ++s) {
                float *row = panels + (s * depth + t) * kCols;
                const int64_t cols = std::min(kCols, width - s * kCols);
                if (cols == kCols) { // a fixed size: inlined
                    std::memcpy(row, src + s * kCols, kCols * sizeof(float));
                    continue;
                }
                std::memcpy(row, src + s * kCols, size_t(cols) * sizeof(float));
                std::fill(row + cols, row + kCols, 0.0f);
            }
        }
        return;
    }
    for (int64_t s = 0; s < count; ++s) { // op(B)(t, j) = B(j, t): a panel's kCols rows of B stay in L1
        float *panel = panels + s * depth * kCols;
        const int64_t first = j0 + s * kCols, cols = std::min(kCols, width - s * kCols);
        if (cols < kCols) {
            for (int64_t t = 0; t < depth; ++t)
                for (int64_t c = 0; c < kCols; ++c)
                    panel[t * kCols + c] = c < cols ? b[(first + c) * ldb + p0 + t] : 0.0f;
            continue;
        }
        for (int64_t group = 0; group < kCols; group += 8) { // 8 rows of B at a time, 8 × 8 in registers
            const float *rows[8];
            for (int64_t c = 0; c < 8; ++c)
                rows[c] = b + (first + group + c) * ldb + p0;
            transposeRows8(rows, depth, panel + group, kCols);
        }
    }
}

// The first rows × cols of a full tile's results into C (= or +=): a tile at C's edge.
void storePart(float *c, int64_t ldc, const float (&part)[kRows][kCols], bool add, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j)
            c[r * ldc + j] = add ? c[r * ldc + j] + part[r][j] : part[r][j];
}

// Where a tile reads op(A)'s value (r, t), t counted from the tile's first k: A's own rows where A is not transposed
// (eight row streams the prefetcher follows: packing them cost GPT-2- and Llama-shaped forwards a tenth of their
// time, once per tile of a packed weight), or a packed panel (k, kRows) where it is.
struct RowsInPlace
{
    const float *rows[kRows];
    float operator()(int64_t r, int64_t t) const { return rows[r][t]; }
};
struct PackedPanel
{
    const float *panel;
    float operator()(int64_t r, int64_t t) const { return panel[t * kRows + r]; }
};

// C's tile: the AVX-512 one compiled apart (packedtiles512.h) where the CPU has AVX-512, also in a build for AVX2
// (the Debian package's x86-64-v3), and plain loops in the same order of summation elsewhere: there the kernel runs
// only when asked for (ATLAS_MATRIX_PRODUCTS=packed, and tst_blasthreads). (16-float vectors in this file made GCC
// warn of an ABI change in a build for AVX2, and GPT-2-small's forward took 8.2 s with them against 0.56 s with these
// loops on an AVX2 Zen 3.)
template <typename ReadA>
void tile(
    float *c, int64_t ldc, const ReadA &a, const float *bPanel, int64_t depth, bool add, int64_t rows, int64_t cols)
{
    if (cpuRunsAvx512Tiles()) {
        if constexpr (std::is_same_v<ReadA, RowsInPlace>)
            avx512::tileFromRows(c, ldc, a.rows, bPanel, depth, add, rows, cols);
        else
            avx512::tileFromPanel(c, ldc, a.panel, bPanel, depth, add, rows, cols);
        return;
    }
    float acc[kRows][kCols] = {};
    for (int64_t t = 0; t < depth; ++t)
        for (int64_t r = 0; r < kRows; ++r)
            for (int64_t j = 0; j < kCols; ++j)
                acc[r][j] += a(r, t) * bPanel[t * kCols + j];
    storePart(c, ldc, acc, add, rows, cols);
}

[[maybe_unused]] bool runsAvx2Kernels(const std::string &kernels)
{
    return kernels == "Haswell" || kernels == "Zen";
}

} // namespace

void packedMatrixProduct(float *c, int64_t ldc, const float *a, int64_t lda, bool transposeA, const float *b,
    int64_t ldb, bool transposeB, int64_t m, int64_t k, int64_t n, bool accumulate)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        if (!accumulate)
            for (int64_t i = 0; i < m; ++i)
                std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
        return;
    }
    const int64_t rowPanels = (m + kRows - 1) / kRows, colPanels = (n + kCols - 1) / kCols;
    // A transposed is packed once, whole: (rowPanels, k, kRows); A itself is read in place. Each thread packs its B
    // blocks as it goes.
    ScratchFloats packedA(transposeA ? rowPanels * k * kRows : 0);
    float *ap = packedA.data();
    const int64_t flopsPerPanel = 2 * k * kRows * kCols; // per A panel and per B panel
    if (transposeA)
        parallelFor(rowPanels, std::max<int64_t>(1, (int64_t(1) << 18) / (k * kRows)), [&](int64_t begin, int64_t end) {
            for (int64_t p = begin; p < end; ++p)
                packTransposedRows(ap + p * k * kRows, a, lda, p * kRows, m, k);
        });
    // The tile of C at row panel p, column j, over k from p0: its A read as the layout asks.
    const auto multiply = [&](int64_t p, int64_t p0, int64_t j, const float *bPanel, int64_t depth, int64_t cols) {
        float *cTile = c + p * kRows * ldc + j;
        const bool add = accumulate || p0 > 0;
        const int64_t rows = std::min(kRows, m - p * kRows);
        if (transposeA)
            return tile(cTile, ldc, PackedPanel {ap + (p * k + p0) * kRows}, bPanel, depth, add, rows, cols);
        RowsInPlace in;
        for (int64_t r = 0; r < kRows; ++r) // rows past m read the panel's first again: their sums are not stored
            in.rows[r] = a + (p * kRows + (r < rows ? r : 0)) * lda + p0;
        tile(cTile, ldc, in, bPanel, depth, add, rows, cols);
    };
    const int64_t grain = std::max<int64_t>(1, (int64_t(4) << 20) / (flopsPerPanel * rowPanels));
    parallelFor(colPanels, grain, [&](int64_t begin, int64_t end) {
        ScratchFloats packedB(kDepth * kWidth);
        float *bp = packedB.data();
        const int64_t last = std::min(n, end * kCols);
        for (int64_t j0 = begin * kCols; j0 < last; j0 += kWidth) {
            const int64_t width = std::min(kWidth, last - j0);
            for (int64_t p0 = 0; p0 < k; p0 += kDepth) {
                const int64_t depth = std::min(kDepth, k - p0);
                packColumns(bp, b, ldb, transposeB, p0, depth, j0, width);
                for (int64_t s = 0; s * kCols < width; ++s) // a B panel stays in L1 while every A panel passes
                    for (int64_t p = 0; p < rowPanels; ++p)
                        multiply(
                            p, p0, j0 + s * kCols, bp + s * depth * kCols, depth, std::min(kCols, width - s * kCols));
            }
        }
    });
}

bool packedProductsChosen()
{
    static const bool chosen = [] {
        if (const char *asked = std::getenv("ATLAS_MATRIX_PRODUCTS"))
            return std::string(asked) == "packed";
#if defined(ATLAS_OPENBLAS) && !defined(ATLAS_ADDRESS_SANITIZER)
        return cpuRunsAvx512Tiles() && runsAvx2Kernels(blasKernels());
#else
        return false;
#endif
    }();
    return chosen;
}

const char *layerProductsDescription()
{
#if defined(__AVX512F__)
    return packedProductsChosen() ? "packed AVX-512 kernel" : "BLAS";
#else
    if (!packedProductsChosen())
        return "BLAS";
    return cpuRunsAvx512Tiles() ? "packed AVX-512 kernel (chosen at run time)"
                                : "packed kernel in plain loops (no AVX-512)";
#endif
}

void matrixProduct(MatrixMap c, ConstMatrixMap a, bool transposeA, ConstMatrixMap b, bool transposeB, bool accumulate)
{
    const int64_t m = transposeA ? a.cols() : a.rows(), n = transposeB ? b.rows() : b.cols();
    if (c.rows() != m || c.cols() != n)
        throw Error("matrixProduct: shapes do not agree");
    matrixProduct(c.data(), c.cols(), a, transposeA, b, transposeB, accumulate);
}

void matrixProduct(
    float *cData, int64_t ldc, ConstMatrixMap a, bool transposeA, ConstMatrixMap b, bool transposeB, bool accumulate)
{
    const int64_t m = transposeA ? a.cols() : a.rows(), k = transposeA ? a.rows() : a.cols();
    const int64_t n = transposeB ? b.rows() : b.cols();
    if ((transposeB ? b.cols() : b.rows()) != k || ldc < n)
        throw Error("matrixProduct: shapes do not agree");
    // Below a tile's rows (a token at a time) packing B costs more than it saves: the BLAS's matrix-vector path. A is
    // packed whole when transposed: past kPackedALimit (a tied head's weight gradient at long inputs, vocabulary ×
    // tokens) the BLAS, which packs in bounded blocks, keeps the memory the trainer's estimate counts.
    const bool packedAFits = (m + kRows - 1) / kRows * kRows * k * int64_t(sizeof(float)) <= kPackedALimit;
    if (packedProductsChosen() && m >= kRows && n >= kCols && k >= 16 && packedAFits) {
        packedMatrixProduct(
            cData, ldc, a.data(), a.cols(), transposeA, b.data(), b.cols(), transposeB, m, k, n, accumulate);
        return;
    }
#if defined(ATLAS_OPENBLAS)
    // Straight to the BLAS with beta 0 or 1: Eigen's `c = a * b` first zeroes c on one thread, then has the BLAS add
    // to it (for Qwen2.5-0.5B's logits at 512 tokens, 311 MB written and read once more for nothing).
    if (m >= kRows && n >= kRows && k >= kRows && std::max({m, n, k, ldc}) <= std::numeric_limits<int>::max()) {
        const int mi = int(m), ni = int(n), ki = int(k), lda = int(a.cols()), ldb = int(b.cols()), ldci = int(ldc);
        const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
        // Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ, and a row-major matrix read column-major is
        // its transpose: so B comes first, each with its own transpose flag.
        const char tb = transposeB ? 'T' : 'N', ta = transposeA ? 'T' : 'N';
        sgemm_(&tb, &ta, &ni, &mi, &ki, &alpha, b.data(), &ldb, a.data(), &lda, &beta, cData, &ldci);
        return;
    }
#endif
    Eigen::Map<MatrixRM, 0, Eigen::OuterStride<>> c(cData, m, n, Eigen::OuterStride<>(ldc));
    const auto product = [&](const auto &x, const auto &y) {
        if (accumulate)
            c.noalias() += x * y;
        else
            c.noalias() = x * y;
    };
    if (transposeA && transposeB)
        product(a.transpose(), b.transpose());
    else if (transposeA)
        product(a.transpose(), b);
    else if (transposeB)
        product(a, b.transpose());
    else
        product(a, b);
}

} // namespace atlas
