#include "tensor/packedtiles512.h"

#include <cstring>

namespace atlas::avx512 {

namespace {

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

template <typename ReadA>
[[gnu::always_inline]] inline void tile(
    float *c, int64_t ldc, const ReadA &a, const float *bPanel, int64_t depth, bool add, int64_t rows, int64_t cols)
{
    Vec16 acc[kTileRows][2];
    for (auto &row : acc)
        row[0] = row[1] = Vec16 {};
    for (int64_t t = 0; t < depth; ++t) {
        const Vec16 b0 = *reinterpret_cast<const Vec16 *>(bPanel + t * kTileCols);
        const Vec16 b1 = *reinterpret_cast<const Vec16 *>(bPanel + t * kTileCols + 16);
        for (int64_t r = 0; r < kTileRows; ++r) {
            const float x = a(r, t);
            acc[r][0] += x * b0;
            acc[r][1] += x * b1;
        }
    }
    if (rows == kTileRows && cols == kTileCols) {
        for (int64_t r = 0; r < kTileRows; ++r) {
            float *row = c + r * ldc;
            storeUnaligned(row, add ? loadUnaligned(row) + acc[r][0] : acc[r][0]);
            storeUnaligned(row + 16, add ? loadUnaligned(row + 16) + acc[r][1] : acc[r][1]);
        }
        return;
    }
    alignas(64) float part[kTileRows][kTileCols];
    for (int64_t r = 0; r < kTileRows; ++r) {
        *reinterpret_cast<Vec16 *>(part[r]) = acc[r][0];
        *reinterpret_cast<Vec16 *>(part[r] + 16) = acc[r][1];
    }
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j)
            c[r * ldc + j] = add ? c[r * ldc + j] + part[r][j] : part[r][j];
}

struct Rows
{
    const float *rows[kTileRows]; // held here, so that the pointers stay in registers
    float operator()(int64_t r, int64_t t) const { return rows[r][t]; }
};
struct Panel
{
    const float *panel;
    float operator()(int64_t r, int64_t t) const { return panel[t * kTileRows + r]; }
};

} // namespace

void tileFromRows(float *c, int64_t ldc, const float *const *aRows, const float *bPanel, int64_t depth, bool add,
    int64_t rows, int64_t cols)
{
    Rows a;
    for (int64_t r = 0; r < kTileRows; ++r)
        a.rows[r] = aRows[r];
    tile(c, ldc, a, bPanel, depth, add, rows, cols);
}

void tileFromPanel(float *c, int64_t ldc, const float *aPanel, const float *bPanel, int64_t depth, bool add,
    int64_t rows, int64_t cols)
{
    tile(c, ldc, Panel {aPanel}, bPanel, depth, add, rows, cols);
}

} // namespace atlas::avx512
