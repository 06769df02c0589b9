#include "tensor/transposerows.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace atlas {

namespace {

#if defined(__AVX2__)

// dst's rows 0..7 (ld floats apart), 8 floats each, = columns t..t+7 of the rows src[0..7]: an 8 × 8 transpose
// in registers.
inline void transpose8x8(const float *const *src, int64_t t, float *dst, int64_t ld)
{
    __m256 r[8], u[8], v[8];
    for (int i = 0; i < 8; ++i)
        r[i] = _mm256_loadu_ps(src[i] + t);
    for (int i = 0; i < 8; i += 2) {
        u[i] = _mm256_unpacklo_ps(r[i], r[i + 1]); // a0 b0 a1 b1 | a4 b4 a5 b5
        u[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]); // a2 b2 a3 b3 | a6 b6 a7 b7
    }
    for (int i = 0; i < 8; i += 4) {
        v[i] = _mm256_shuffle_ps(u[i], u[i + 2], _MM_SHUFFLE(1, 0, 1, 0)); // column 0 | 4 of four rows
        v[i + 1] = _mm256_shuffle_ps(u[i], u[i + 2], _MM_SHUFFLE(3, 2, 3, 2)); // 1 | 5
        v[i + 2] = _mm256_shuffle_ps(u[i + 1], u[i + 3], _MM_SHUFFLE(1, 0, 1, 0)); // 2 | 6
        v[i + 3] = _mm256_shuffle_ps(u[i + 1], u[i + 3], _MM_SHUFFLE(3, 2, 3, 2)); // 3 | 7
    }
    for (int i = 0; i < 4; ++i) {
        _mm256_storeu_ps(dst + i * ld, _mm256_permute2f128_ps(v[i], v[i + 4], 0x20));
        _mm256_storeu_ps(dst + (i + 4) * ld, _mm256_permute2f128_ps(v[i], v[i + 4], 0x31));
    }
}

#endif

} // namespace

void transposeRows8(const float *const *src, int64_t d, float *dst, int64_t ld)
{
    int64_t t = 0;
#if defined(__AVX2__)
    for (; t + 8 <= d; t += 8)
        transpose8x8(src, t, dst + t * ld, ld);
#endif
    for (; t < d; ++t)
        for (int64_t c = 0; c < 8; ++c)
            dst[t * ld + c] = src[c][t];
}

} // namespace atlas
