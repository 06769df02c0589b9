#include "tensor/matrixproduct.h"

#include "tensor/buffercache.h"
#include "util/blasthreads.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/sanitizers.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace atlas {

namespace {

// The register tile: kRows × kCols of C in 16 vectors of 16 floats, one AVX-512 register each.
constexpr int64_t kRows = 8, kCols = 32;
// k is taken kDepth at a time (a B panel of kDepth × kCols, 32 KiB, stays in L1), and the columns kWidth at a time
// (a packed B block of 256 KiB in L2).
constexpr int64_t kDepth = 256, kWidth = 256;
// The largest packed copy of A matrixProduct makes.
constexpr int64_t kPackedALimit = int64_t(64) << 20;

// A tensor buffer (kept for reuse, tensor/buffercache.h) outside the allocation listeners: scratch, like the BLAS's.
class Scratch
{
public:
    explicit Scratch(int64_t floats)
        : m_bytes(size_t(std::max<int64_t>(floats, 16)) * sizeof(float))
        , m_data(static_cast<float *>(allocateTensorBuffer(m_bytes)))
    {
    }
    ~Scratch() { freeTensorBuffer(m_data, m_bytes); }
    Scratch(const Scratch &) = delete;
    Scratch &operator=(const Scratch &) = delete;
    float *data() { return m_data; }

private:
    size_t m_bytes;
    float *m_data;
};

// op(A)'s rows [r0, r0 + kRows) as a panel (k, kRows), rows past m as zeros.
void packRows(float *panel, const float *a, int64_t lda, bool transposed, int64_t r0, int64_t m, int64_t k)
{
    const int64_t rows = std::min(kRows, m - r0);
    if (transposed) { // op(A)(i, t) = A(t, i): each t reads kRows neighbours
        for (int64_t t = 0; t < k; ++t) {
            const float *src = a + t * lda + r0;
            for (int64_t r = 0; r < kRows; ++r)
                panel[t * kRows + r] = r < rows ? src[r] : 0.0f;
        }
        return;
    }
    for (int64_t r = 0; r < kRows; ++r) {
        const float *src = a + (r0 + r) * lda;
        for (int64_t t = 0; t < k; ++t)
            panel[t * kRows + r] = r < rows ? src[t] : 0.0f;
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
        for (int64_t t = 0; t < depth; ++t)
            for (int64_t c = 0; c < kCols; ++c)
                panel[t * kCols + c] = b[(first + c) * ldb + p0 + t];
    }
}

// The first rows × cols of a full tile's results into C (= or +=): a tile at C's edge.
void storePart(float *c, int64_t ldc, const float (&part)[kRows][kCols], bool add, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j)
            c[r * ldc + j] = add ? c[r * ldc + j] + part[r][j] : part[r][j];
}

#if defined(__AVX512F__)
typedef float Vec16 __attribute__((vector_size(64)));

// C's rows are not aligned: memcpy is an unaligned load or store.
Vec16 loadUnaligned(const float *p)
{
    Vec16 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
void storeUnaligned(float *p, const Vec16 &v)
{
    std::memcpy(p, &v, sizeof v);
}

// C's tile (rows × cols of at most kRows × kCols) = or += the product of an A panel and a B panel over depth.
void tile(float *c, int64_t ldc, const float *aPanel, const float *bPanel, int64_t depth, bool add, int64_t rows,
    int64_t cols)
{
    Vec16 acc[kRows][2];
    for (auto &row : acc)
        row[0] = row[1] = Vec16 {};
    for (int64_t t = 0; t < depth; ++t) {
        const Vec16 b0 = *reinterpret_cast<const Vec16 *>(bPanel + t * kCols);
        const Vec16 b1 = *reinterpret_cast<const Vec16 *>(bPanel + t * kCols + 16);
        for (int64_t r = 0; r < kRows; ++r) {
            const float x = aPanel[t * kRows + r];
            acc[r][0] += x * b0;
            acc[r][1] += x * b1;
        }
    }
    if (rows == kRows && cols == kCols) {
        for (int64_t r = 0; r < kRows; ++r) {
            float *row = c + r * ldc;
            storeUnaligned(row, add ? loadUnaligned(row) + acc[r][0] : acc[r][0]);
            storeUnaligned(row + 16, add ? loadUnaligned(row + 16) + acc[r][1] : acc[r][1]);
        }
        return;
    }
    alignas(64) float part[kRows][kCols];
    for (int64_t r = 0; r < kRows; ++r) {
        *reinterpret_cast<Vec16 *>(part[r]) = acc[r][0];
        *reinterpret_cast<Vec16 *>(part[r] + 16) = acc[r][1];
    }
    storePart(c, ldc, part, add, rows, cols);
}
#else
// Without AVX-512 the kernel runs only when asked for (ATLAS_MATRIX_PRODUCTS=packed, and tst_blasthreads): plain
// loops in the same order of summation. (16-float vectors there made GCC warn of an ABI change, and GPT-2-small's
// forward took 8.2 s with them against 0.56 s with these loops on an AVX2 Zen 3.)
void tile(float *c, int64_t ldc, const float *aPanel, const float *bPanel, int64_t depth, bool add, int64_t rows,
    int64_t cols)
{
    float acc[kRows][kCols] = {};
    for (int64_t t = 0; t < depth; ++t)
        for (int64_t r = 0; r < kRows; ++r)
            for (int64_t j = 0; j < kCols; ++j)
                acc[r][j] += aPanel[t * kRows + r] * bPanel[t * kCols + j];
    storePart(c, ldc, acc, add, rows, cols);
}
#endif

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
    // A is packed once, whole: (rowPanels, k, kRows). Each thread packs its B blocks as it goes.
    Scratch packedA(rowPanels * k * kRows);
    float *ap = packedA.data();
    const int64_t flopsPerPanel = 2 * k * kRows * kCols; // per A panel and per B panel
    parallelFor(rowPanels, std::max<int64_t>(1, (int64_t(1) << 18) / (k * kRows)), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p)
            packRows(ap + p * k * kRows, a, lda, transposeA, p * kRows, m, k);
    });
    const int64_t grain = std::max<int64_t>(1, (int64_t(4) << 20) / (flopsPerPanel * rowPanels));
    parallelFor(colPanels, grain, [&](int64_t begin, int64_t end) {
        Scratch packedB(kDepth * kWidth);
        float *bp = packedB.data();
        const int64_t last = std::min(n, end * kCols);
        for (int64_t j0 = begin * kCols; j0 < last; j0 += kWidth) {
            const int64_t width = std::min(kWidth, last - j0);
            for (int64_t p0 = 0; p0 < k; p0 += kDepth) {
                const int64_t depth = std::min(kDepth, k - p0);
                packColumns(bp, b, ldb, transposeB, p0, depth, j0, width);
                for (int64_t s = 0; s * kCols < width; ++s) // a B panel stays in L1 while every A panel passes
                    for (int64_t p = 0; p < rowPanels; ++p)
                        tile(c + p * kRows * ldc + j0 + s * kCols, ldc, ap + (p * k + p0) * kRows,
                            bp + s * depth * kCols, depth, accumulate || p0 > 0, std::min(kRows, m - p * kRows),
                            std::min(kCols, width - s * kCols));
            }
        }
    });
}

bool packedProductsChosen()
{
    static const bool chosen = [] {
        if (const char *asked = std::getenv("ATLAS_MATRIX_PRODUCTS"))
            return std::string(asked) == "packed";
#if defined(ATLAS_OPENBLAS) && defined(__AVX512F__) && !defined(ATLAS_ADDRESS_SANITIZER)
        return runsAvx2Kernels(blasKernels());
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
    return packedProductsChosen() ? "packed kernel in plain loops (no AVX-512)" : "BLAS";
#endif
}

void matrixProduct(MatrixMap c, ConstMatrixMap a, bool transposeA, ConstMatrixMap b, bool transposeB, bool accumulate)
{
    const int64_t m = transposeA ? a.cols() : a.rows(), k = transposeA ? a.rows() : a.cols();
    const int64_t n = transposeB ? b.rows() : b.cols();
    if ((transposeB ? b.cols() : b.rows()) != k || c.rows() != m || c.cols() != n)
        throw Error("matrixProduct: shapes do not agree");
    // Below a tile's rows (a token at a time) packing B costs more than it saves: the BLAS's matrix-vector path. A is
    // packed whole: past kPackedALimit (a tied head's weight gradient at long inputs, vocabulary × tokens) the BLAS,
    // which packs in bounded blocks, keeps the memory the trainer's estimate counts.
    const bool packedAFits = (m + kRows - 1) / kRows * kRows * k * int64_t(sizeof(float)) <= kPackedALimit;
    if (packedProductsChosen() && m >= kRows && n >= kCols && k >= 16 && packedAFits) {
        packedMatrixProduct(
            c.data(), n, a.data(), a.cols(), transposeA, b.data(), b.cols(), transposeB, m, k, n, accumulate);
        return;
    }
#if defined(ATLAS_OPENBLAS)
    // Straight to the BLAS with beta 0 or 1: Eigen's `c = a * b` first zeroes c on one thread, then has the BLAS add
    // to it (for Qwen2.5-0.5B's logits at 512 tokens, 311 MB written and read once more for nothing).
    if (m >= kRows && n >= kRows && k >= kRows && std::max({m, n, k}) <= std::numeric_limits<int>::max()) {
        const int mi = int(m), ni = int(n), ki = int(k), lda = int(a.cols()), ldb = int(b.cols()), ldc = int(n);
        const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
        // Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ, and a row-major matrix read column-major is
        // its transpose: so B comes first, each with its own transpose flag.
        const char tb = transposeB ? 'T' : 'N', ta = transposeA ? 'T' : 'N';
        sgemm_(&tb, &ta, &ni, &mi, &ki, &alpha, b.data(), &ldb, a.data(), &lda, &beta, c.data(), &ldc);
        return;
    }
#endif
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
