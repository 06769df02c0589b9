#pragma once

// Internal to io/: ggml's block decoders, each turning one block of a type into its floats, for io/ggmltypes.cpp,
// which inlines them into the loops that call them (its table of types, its row products, dequantizeGgml). That file
// is compiled with -ffp-contract=off (src/core/CMakeLists.txt): ggml's d·q + m is a product rounded, then a sum
// rounded; a fused multiply-add would round once and differ in the last bit.
#include "io/ggmlblocks.h"
#include "io/weightvalues.h"

#include <array>
#include <cstdint>
#include <cstring>
#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace atlas::ggml {

inline void f32(const unsigned char *b, float *y)
{
    std::memcpy(y, b, sizeof(float));
}

inline void f16(const unsigned char *b, float *y)
{
    *y = halfToFloat(u16(b));
}

inline void bf16(const unsigned char *b, float *y)
{
    *y = bf16ToFloat(u16(b));
}

// The 4-bit code of element j of a 32-element block whose 16 bytes hold elements j and j + 16 in one byte.
inline int nibble(const unsigned char *qs, int j)
{
    return j < 16 ? qs[j] & 0x0F : qs[j - 16] >> 4;
}

// The block decoders below are inlined into the loops that call them (io/ggmltypes.cpp: decodeBlocks, dotRows). They
// loop over a block's codes so that the compiler vectorizes them, or, for the 32-element blocks of 4 and 5 bits that
// GCC 12 leaves scalar (a Q4_0 matrix decoded at a third of a Q4_K one's speed), say it with AVX2; each value is
// computed as ggml computes it: the code an integer, converted exactly, then one rounded product (and for a type with a
// minimum, one rounded sum).
#ifdef __AVX2__
// The 32 codes of a block whose 16 bytes hold elements j and j + 16 in one byte, element e in byte e.
[[gnu::always_inline]] inline __m256i nibbles(const unsigned char *qs)
{
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(qs));
    const __m128i mask = _mm_set1_epi8(0x0F);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(bytes, 4), mask), _mm_and_si128(bytes, mask));
}

// 32 four-bit codes, each replaced by its level of 16 (IQ4's and MXFP4's non-uniform values).
[[gnu::always_inline]] inline __m256i levelsOf(__m256i codes, const std::array<int8_t, 16> &levels)
{
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i *>(levels.data()));
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(table), codes);
}

// 32 signed bytes, each times d (then plus m, for a type with a minimum), into y.
template <bool Minimum = false>
[[gnu::always_inline]] inline void scaledBytes(__m256i values, float d, float m, float *y)
{
    const __m256 scale = _mm256_set1_ps(d);
    const __m128i halves[2] = {_mm256_castsi256_si128(values), _mm256_extracti128_si256(values, 1)};
    for (int eight = 0; eight < 4; ++eight) {
        const __m128i from = eight % 2 ? _mm_srli_si128(halves[eight / 2], 8) : halves[eight / 2];
        __m256 v = _mm256_mul_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(from)));
        if constexpr (Minimum)
            v = _mm256_add_ps(v, _mm256_set1_ps(m));
        _mm256_storeu_ps(y + 8 * eight, v);
    }
}

// The 32 bits of qh, bit e as 16 or 0 in byte e.
[[gnu::always_inline]] inline __m256i fifthBits(uint32_t qh)
{
    const __m256i byteOfBit = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2,
        3, 3, 3, 3, 3, 3, 3, 3); // in each 128-bit lane, from that lane's copy of qh
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201));
    const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(int(qh)), byteOfBit);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit), _mm256_set1_epi8(16));
}
#endif

[[gnu::always_inline]] inline void q4_0(const unsigned char *__restrict b, float *__restrict y)
{
    const float d = half(b);
    const unsigned char *qs = b + 2;
#ifdef __AVX2__
    scaledBytes(_mm256_sub_epi8(nibbles(qs), _mm256_set1_epi8(8)), d, 0, y);
#else
    for (int j = 0; j < 16; ++j)
        y[j] = d * float((qs[j] & 0x0F) - 8);
    for (int j = 0; j < 16; ++j)
        y[j + 16] = d * float((qs[j] >> 4) - 8);
#endif
}

[[gnu::always_inline]] inline void q4_1(const unsigned char *__restrict b, float *__restrict y)
{
    const float d = half(b), m = half(b + 2);
    const unsigned char *qs = b + 4;
#ifdef __AVX2__
    scaledBytes<true>(nibbles(qs), d, m, y);
#else
    for (int j = 0; j < 16; ++j)
        y[j] = d * float(qs[j] & 0x0F) + m;
    for (int j = 0; j < 16; ++j)
        y[j + 16] = d * float(qs[j] >> 4) + m;
#endif
}

inline uint32_t u32(const unsigned char *p)
{
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

[[gnu::always_inline]] inline void q5_0(const unsigned char *__restrict b, float *__restrict y)
{
    const float d = half(b);
    const uint32_t qh = u32(b + 2);
    const unsigned char *qs = b + 6;
#ifdef __AVX2__
    scaledBytes(_mm256_sub_epi8(_mm256_or_si256(nibbles(qs), fifthBits(qh)), _mm256_set1_epi8(16)), d, 0, y);
#else
    for (int j = 0; j < 16; ++j)
        y[j] = d * float(((qs[j] & 0x0F) | int((qh >> j) & 1) << 4) - 16);
    for (int j = 0; j < 16; ++j)
        y[j + 16] = d * float(((qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4) - 16);
#endif
}

[[gnu::always_inline]] inline void q5_1(const unsigned char *__restrict b, float *__restrict y)
{
    const float d = half(b), m = half(b + 2);
    const uint32_t qh = u32(b + 4);
    const unsigned char *qs = b + 8;
#ifdef __AVX2__
    scaledBytes<true>(_mm256_or_si256(nibbles(qs), fifthBits(qh)), d, m, y);
#else
    for (int j = 0; j < 16; ++j)
        y[j] = d * float((qs[j] & 0x0F) | int((qh >> j) & 1) << 4) + m;
    for (int j = 0; j < 16; ++j)
        y[j + 16] = d * float((qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4) + m;
#endif
}

[[gnu::always_inline]] inline void q8_0(const unsigned char *__restrict b, float *__restrict y)
{
    const float d = half(b);
    for (int j = 0; j < 32; ++j)
        y[j] = float(int8_t(b[2 + j])) * d;
}

#ifdef __AVX2__
// Sixteen byte codes as floats into y: scale · (code − offset), then minus min where the type has one.
template <bool Minimum>
[[gnu::always_inline]] inline void sixteenCodes(__m128i codes, int offset, float scale, float min, float *y)
{
    const __m256i off = _mm256_set1_epi32(offset);
    const __m256 s = _mm256_set1_ps(scale);
    for (int eight = 0; eight < 2; ++eight) {
        const __m128i from = eight ? _mm_srli_si128(codes, 8) : codes;
        __m256 v = _mm256_mul_ps(s, _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_cvtepu8_epi32(from), off)));
        if constexpr (Minimum)
            v = _mm256_sub_ps(v, _mm256_set1_ps(min));
        _mm256_storeu_ps(y + 8 * eight, v);
    }
}

// Bits [shift, shift + width) of each of 32 bytes, as a number in each byte, moved up by `up` bits (the K-quants'
// codes are put together from such fields).
[[gnu::always_inline]] inline __m256i bitField(__m256i bytes, int shift, int width, int up = 0)
{
    const __m256i field
        = _mm256_and_si256(_mm256_srl_epi16(bytes, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8(char((1 << width) - 1)));
    return up ? _mm256_slli_epi16(field, up) : field;
}

[[gnu::always_inline]] inline __m256i load32(const unsigned char *p)
{
    return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
}
#endif

// A K-quant's element e = 128·h + 32·k + l (h the half, k the pair of bits, l < 32) reads 2 bits of byte 32·h + l.
[[gnu::always_inline]] inline void q2_k(const unsigned char *b, float *y)
{
    const unsigned char *scales = b, *qs = b + 16;
    const float d = half(b + 80), dmin = half(b + 82);
#ifdef __AVX2__
    for (int h = 0; h < 2; ++h)
        for (int k = 0; k < 4; ++k) {
            const __m256i q = bitField(load32(qs + 32 * h), 2 * k, 2);
            for (int sixteen = 0; sixteen < 2; ++sixteen) {
                const int g = 8 * h + 2 * k + sixteen;
                const __m128i codes = sixteen ? _mm256_extracti128_si256(q, 1) : _mm256_castsi256_si128(q);
                sixteenCodes<true>(codes, 0, d * float(scales[g] & 0x0F), dmin * float(scales[g] >> 4), y + 16 * g);
            }
        }
#else
    for (int e = 0; e < kQkK; ++e) {
        const int h = e / 128, k = e % 128 / 32, l = e % 32, g = e / 16;
        const float dl = d * float(scales[g] & 0x0F), ml = dmin * float(scales[g] >> 4);
        y[e] = dl * float((qs[32 * h + l] >> (2 * k)) & 3) - ml;
    }
#endif
}

[[gnu::always_inline]] inline void q3_k(const unsigned char *b, float *y)
{
    const unsigned char *hmask = b, *qs = b + 32, *packed = b + 96;
    const float d = half(b + 108);
    float dl[16];
    for (int i = 0; i < 16; ++i)
        dl[i] = d * float(ggml::q3kScale(packed, i));
#ifdef __AVX2__ // the code low + 4·highBit, less 4
    for (int h = 0; h < 2; ++h)
        for (int k = 0; k < 4; ++k) {
            const __m256i q
                = _mm256_or_si256(bitField(load32(qs + 32 * h), 2 * k, 2), bitField(load32(hmask), 4 * h + k, 1, 2));
            for (int sixteen = 0; sixteen < 2; ++sixteen) {
                const int g = 8 * h + 2 * k + sixteen;
                const __m128i codes = sixteen ? _mm256_extracti128_si256(q, 1) : _mm256_castsi256_si128(q);
                sixteenCodes<false>(codes, 4, dl[g], 0, y + 16 * g);
            }
        }
#else
    for (int e = 0; e < kQkK; ++e) {
        const int h = e / 128, k = e % 128 / 32, l = e % 32;
        const int low = (qs[32 * h + l] >> (2 * k)) & 3, highBit = (hmask[l] >> (4 * h + k)) & 1;
        y[e] = dl[e / 16] * float(low - (highBit ? 0 : 4));
    }
#endif
}

// Q4_K and Q5_K: 8 sub-blocks of 32; sub-block j reads nibble j % 2 of bytes 32·(j / 2) … and, in Q5_K, bit j of qh.
// GCC 12 leaves the scalar loops scalar where they are inlined into the row product, hence AVX2 (the same values).
template <bool fifthBit>
[[gnu::always_inline]] inline void q45_k(const unsigned char *__restrict b, float *__restrict y)
{
    const float d = half(b), dmin = half(b + 2);
    const unsigned char *scales = b + 4, *qh = b + 16, *qs = fifthBit ? b + 48 : b + 16;
    for (int j = 0; j < 8; ++j) {
        int scale, min;
        scaleAndMin(scales, j, scale, min);
        const float dl = d * float(scale), ml = dmin * float(min);
#ifdef __AVX2__
        __m256i q = bitField(load32(qs + 32 * (j / 2)), 4 * (j % 2), 4);
        if constexpr (fifthBit)
            q = _mm256_or_si256(q, bitField(load32(qh), j, 1, 4));
        sixteenCodes<true>(_mm256_castsi256_si128(q), 0, dl, ml, y + 32 * j);
        sixteenCodes<true>(_mm256_extracti128_si256(q, 1), 0, dl, ml, y + 32 * j + 16);
#else
        for (int l = 0; l < 32; ++l) {
            int q = (qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0x0F;
            if (fifthBit)
                q |= ((qh[l] >> j) & 1) << 4;
            y[32 * j + l] = dl * float(q) - ml;
        }
#endif
    }
}

[[gnu::always_inline]] inline void q4_k(const unsigned char *__restrict b, float *__restrict y)
{
    q45_k<false>(b, y);
}

[[gnu::always_inline]] inline void q5_k(const unsigned char *__restrict b, float *__restrict y)
{
    q45_k<true>(b, y);
}

[[gnu::always_inline]] inline void q6_k(const unsigned char *__restrict b, float *__restrict y)
{
    const unsigned char *ql = b, *qh = b + 128;
    const auto *scales = reinterpret_cast<const int8_t *>(b + 192);
    const float d = half(b + 208);
    // element e = 128·h + 32·k + l, its scale scales[e / 16]: ggml's (d · scale) · q
    for (int h = 0; h < 2; ++h)
        for (int k = 0; k < 4; ++k) {
#ifdef __AVX2__
            const __m256i low = bitField(load32(ql + 64 * h + 32 * (k % 2)), 4 * (k / 2), 4);
            const __m256i q = _mm256_or_si256(low, bitField(load32(qh + 32 * h), 2 * k, 2, 4));
            float *to = y + 128 * h + 32 * k;
            sixteenCodes<false>(_mm256_castsi256_si128(q), 32, d * float(scales[8 * h + 2 * k]), 0, to);
            sixteenCodes<false>(_mm256_extracti128_si256(q, 1), 32, d * float(scales[8 * h + 2 * k + 1]), 0, to + 16);
#else
            for (int sixteen = 0; sixteen < 2; ++sixteen) {
                const float dl = d * float(scales[8 * h + 2 * k + sixteen]);
                for (int i = 0; i < 16; ++i) {
                    const int l = 16 * sixteen + i;
                    const int low = (ql[64 * h + 32 * (k % 2) + l] >> (4 * (k / 2))) & 0x0F;
                    const int high = (qh[32 * h + l] >> (2 * k)) & 3;
                    y[128 * h + 32 * k + l] = dl * float(int8_t(low | high << 4) - 32);
                }
            }
#endif
        }
}

// Thirty-two values, each d times the level its nibble of `qs` names (IQ4's and MXFP4's uneven grids).
[[gnu::always_inline]] inline void tableLevels(
    const unsigned char *__restrict qs, const std::array<int8_t, 16> &levels, float d, float *__restrict y)
{
#ifdef __AVX2__
    scaledBytes(levelsOf(nibbles(qs), levels), d, 0, y);
#else
    for (int j = 0; j < 32; ++j)
        y[j] = d * float(levels[size_t(nibble(qs, j))]);
#endif
}

[[gnu::always_inline]] inline void iq4_nl(const unsigned char *__restrict b, float *__restrict y)
{
    tableLevels(b + 2, kIq4Levels, half(b), y);
}

[[gnu::always_inline]] inline void iq4_xs(const unsigned char *__restrict b, float *__restrict y)
{
    const float d = half(b);
    const unsigned char *qs = b + 8;
    for (int j = 0; j < 8; ++j)
        tableLevels(qs + 16 * j, kIq4Levels, d * float(ggml::iq4xsScale(b, j)), y + 32 * j);
}

[[gnu::always_inline]] inline void mxfp4(const unsigned char *__restrict b, float *__restrict y)
{
    tableLevels(b + 1, kMxfp4DoubledLevels, mxfp4HalfScale(b[0]), y);
}

// Thirty-two half-precision values, a block of an F16 matrix as the row products read it.
[[gnu::always_inline]] inline void f16Block(const unsigned char *__restrict b, float *__restrict y)
{
#ifdef __F16C__ // exact, as halfToFloat, but for a signalling NaN, which comes out quiet
    for (int j = 0; j < 32; j += 8)
        _mm256_storeu_ps(y + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(b + 2 * j))));
#else
    for (int j = 0; j < 32; ++j)
        y[j] = halfToFloat(u16(b + 2 * j));
#endif
}

// Thirty-two bfloat16 values: each the top half of a float32's bits, so exact.
[[gnu::always_inline]] inline void bf16Block(const unsigned char *__restrict b, float *__restrict y)
{
#ifdef __AVX2__
    for (int j = 0; j < 32; j += 8) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(b + 2 * j)));
        _mm256_storeu_ps(y + j, _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16)));
    }
#else
    for (int j = 0; j < 32; ++j)
        y[j] = bf16ToFloat(u16(b + 2 * j));
#endif
}

} // namespace atlas::ggml
