#pragma once

// Internal to the core: the views, panels and session reach this through the core's public headers only
// (tests/tools/check_layers.py).
//
// The packed product's register tile in AVX-512, compiled apart (packedtiles512.cpp, -mavx512f) so that a build for
// AVX2 (the Debian package's x86-64-v3) runs it where the CPU has AVX-512, as a build for AVX-512 always does:
// matrixproduct.cpp checks the CPU at run time before it calls these. The file includes nothing whose inline functions
// the rest of the program shares, so no AVX-512 instruction leaves it. Each element of C is summed in the order of the
// plain loops and of the tile a build for AVX-512 inlines (over k in order, one fused multiply-add a step): the results
// are the same bits.

#include <cstdint>

namespace atlas::avx512 {

constexpr int64_t kTileRows = 8, kTileCols = 32;

// C's tile (rows × cols of at most 8 × 32, C's rows ldc floats apart) = or += op(A)'s 8 rows times a B panel
// (depth, 32; 64-byte aligned) over depth: A's rows where they are (aRows[r] reads depth floats) ...
void tileFromRows(float *c, int64_t ldc, const float *const *aRows, const float *bPanel, int64_t depth, bool add,
    int64_t rows, int64_t cols);
// ... or a packed panel (depth, 8) of Aᵀ.
void tileFromPanel(float *c, int64_t ldc, const float *aPanel, const float *bPanel, int64_t depth, bool add,
    int64_t rows, int64_t cols);

} // namespace atlas::avx512
