/* One core's matrix product C = A B five ways (issue 62, docs/benchmarks.md "AVX512-BF16"): OpenBLAS's sgemm, a
 * float32 AVX-512 register tile (8 rows × 32 columns, B packed in panels of 32 columns, as tensor/matrixproduct.h
 * packs it) and the same tile with VDPBF16PS, which multiplies pairs of bfloat16 values and adds them into float32.
 * A is converted to bfloat16 inside the timed call (it is a layer's input); B is packed once, outside it (a layer's
 * weights). Last, AMX's TDPBF16PS, a 16 × 16 tile of C from 16 × 32 bfloat16 of A and 32 × 16 of B per instruction,
 * four C tiles at a time, and the same with each value split into two bfloat16 (high + low) and three products summed
 * ("bf16x3"), for nearly float32's accuracy. Each product's largest error against a double-precision sum is printed beside its time.
 *   cc -O3 -march=native benchmarks/bf16_tile.c -lopenblas -lm -o /tmp/bf16_tile && OPENBLAS_NUM_THREADS=1 /tmp/bf16_tile
 * Needs a CPU with AVX512-BF16. The AMX rows need AMX-BF16 (Intel Sapphire Rapids and later) and Linux 5.16 or later;
 * elsewhere (AMD's Zen 4 and 5) -march=native leaves them out and the first four rows are printed. */
#include <cblas.h>
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* float32 to bfloat16, rounded to nearest even (as VCVTNEPS2BF16) */
static uint16_t bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

/* B [K × N] as panels of 32 columns, each K rows of 32 floats */
static void pack_f32(float *out, const float *b, int K, int N)
{
    for (int n0 = 0; n0 < N; n0 += 32)
        for (int k = 0; k < K; ++k)
            memcpy(out + (size_t)n0 * K + (size_t)k * 32, b + (size_t)k * N + n0, 32 * sizeof(float));
}

/* B as panels of 32 columns, each K / 2 rows of 32 pairs: lane j of pair row p holds B[2p][j] (low) and B[2p+1][j] */
static void pack_bf16(uint32_t *out, const float *b, int K, int N)
{
    for (int n0 = 0; n0 < N; n0 += 32)
        for (int p = 0; p < K / 2; ++p)
            for (int j = 0; j < 32; ++j)
                out[(size_t)n0 * (K / 2) + (size_t)p * 32 + j] = bf16(b[(size_t)(2 * p) * N + n0 + j])
                    | (uint32_t)bf16(b[(size_t)(2 * p + 1) * N + n0 + j]) << 16;
}

static void tile_f32(float *c, const float *a, const float *bp, int M, int K, int N)
{
    for (int n0 = 0; n0 < N; n0 += 32) {
        const float *panel = bp + (size_t)n0 * K;
        for (int i = 0; i < M; i += 8) {
            __m512 acc[8][2];
            for (int r = 0; r < 8; ++r)
                acc[r][0] = acc[r][1] = _mm512_setzero_ps();
            for (int k = 0; k < K; ++k) {
                const __m512 b0 = _mm512_loadu_ps(panel + (size_t)k * 32), b1 = _mm512_loadu_ps(panel + (size_t)k * 32 + 16);
                for (int r = 0; r < 8; ++r) {
                    const __m512 x = _mm512_set1_ps(a[(size_t)(i + r) * K + k]);
                    acc[r][0] = _mm512_fmadd_ps(x, b0, acc[r][0]);
                    acc[r][1] = _mm512_fmadd_ps(x, b1, acc[r][1]);
                }
            }
            for (int r = 0; r < 8; ++r) {
                _mm512_storeu_ps(c + (size_t)(i + r) * N + n0, acc[r][0]);
                _mm512_storeu_ps(c + (size_t)(i + r) * N + n0 + 16, acc[r][1]);
            }
        }
    }
}

/* ap: A as bfloat16 pairs, M rows of K / 2, converted from `a` in the call (a layer's input), or, a null `a`, before */
static void tile_bf16(float *c, const float *a, uint32_t *ap, const uint32_t *bp, int M, int K, int N)
{
    for (size_t i = 0; a && i < (size_t)M * K / 2; ++i)
        ap[i] = bf16(a[2 * i]) | (uint32_t)bf16(a[2 * i + 1]) << 16;
    for (int n0 = 0; n0 < N; n0 += 32) {
        const uint32_t *panel = bp + (size_t)n0 * (K / 2);
        for (int i = 0; i < M; i += 8) {
            __m512 acc[8][2];
            for (int r = 0; r < 8; ++r)
                acc[r][0] = acc[r][1] = _mm512_setzero_ps();
            for (int p = 0; p < K / 2; ++p) {
                const __m512bh b0 = (__m512bh)_mm512_loadu_si512(panel + (size_t)p * 32),
                               b1 = (__m512bh)_mm512_loadu_si512(panel + (size_t)p * 32 + 16);
                for (int r = 0; r < 8; ++r) {
                    const __m512bh x = (__m512bh)_mm512_set1_epi32((int)ap[(size_t)(i + r) * (K / 2) + p]);
                    acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, b0);
                    acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, b1);
                }
            }
            for (int r = 0; r < 8; ++r) {
                _mm512_storeu_ps(c + (size_t)(i + r) * N + n0, acc[r][0]);
                _mm512_storeu_ps(c + (size_t)(i + r) * N + n0 + 16, acc[r][1]);
            }
        }
    }
}

/* B for AMX: for each 16 columns and each 32 rows of k, 16 pair rows of 16 pairs (VNNI order), 1 kB a tile */
static uint16_t bf16_part(float x, int low) /* x rounded to bfloat16, or what that rounding leaves out */
{
    if (!low)
        return bf16(x);
    const uint32_t h = (uint32_t)bf16(x) << 16;
    float high;
    memcpy(&high, &h, 4);
    return bf16(x - high);
}

static void pack_amx(uint32_t *out, const float *b, int K, int N, int low)
{
    for (int n0 = 0; n0 < N; n0 += 16)
        for (int k0 = 0; k0 < K; k0 += 32)
            for (int p = 0; p < 16; ++p)
                for (int j = 0; j < 16; ++j)
                    *out++ = bf16_part(b[(size_t)(k0 + 2 * p) * N + n0 + j], low)
                        | (uint32_t)bf16_part(b[(size_t)(k0 + 2 * p + 1) * N + n0 + j], low) << 16;
}

#ifdef __AMX_BF16__
struct tile_config
{
    uint8_t palette, start_row, reserved[14];
    uint16_t bytes_per_row[16];
    uint8_t rows[16];
};

/* a's values as bfloat16 (rounded to nearest even, 32 at a time), and with `low` what that rounding left out, as
 * bfloat16 too: a ≈ high + low to about 16 bits */
static void split_bf16(uint16_t *high, uint16_t *low, const float *a, size_t count)
{
    for (size_t i = 0; i < count; i += 32) {
        const __m512 x0 = _mm512_loadu_ps(a + i), x1 = _mm512_loadu_ps(a + i + 16);
        const __m512bh h = _mm512_cvtne2ps_pbh(x1, x0);
        _mm512_storeu_si512(high + i, (__m512i)h);
        if (!low)
            continue;
        /* bfloat16 to float32 is a shift of 16 bits */
        const __m512i wide = (__m512i)h;
        const __m512 h0 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(wide)), 16)),
                     h1 = _mm512_castsi512_ps(
                         _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(wide, 1)), 16));
        _mm512_storeu_si512(low + i, (__m512i)_mm512_cvtne2ps_pbh(_mm512_sub_ps(x1, h1), _mm512_sub_ps(x0, h0)));
    }
}

/* C in blocks of 32 × 32: tiles 0–3 hold C, 4–5 two 16-row strips of A, 6–7 two 16-column strips of B. With the
 * low parts (ablo, bplo), three products per block, high·high + high·low + low·high ("bf16x3"), for float32's
 * accuracy nearly. */
static void tile_amx(float *c, const float *a, uint16_t *abf, uint16_t *ablo, const uint32_t *bp, const uint32_t *bplo,
    int M, int K, int N)
{
    split_bf16(abf, ablo, a, (size_t)M * K);
    struct tile_config cfg = {.palette = 1};
    for (int t = 0; t < 8; ++t) {
        cfg.rows[t] = 16;
        cfg.bytes_per_row[t] = 64;
    }
    _tile_loadconfig(&cfg);
    const size_t strip = (size_t)K / 32 * 256; /* a 16-column strip of packed B, in pairs */
    for (int n0 = 0; n0 < N; n0 += 32)
        for (int i = 0; i < M; i += 32) {
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
            for (int k0 = 0; k0 < K; k0 += 32) {
                const size_t b0 = (size_t)(n0 / 16) * strip + (size_t)k0 / 32 * 256, b1 = b0 + strip;
                _tile_loadd(4, abf + (size_t)i * K + k0, K * 2);
                _tile_loadd(5, abf + (size_t)(i + 16) * K + k0, K * 2);
                _tile_loadd(6, bp + b0, 64);
                _tile_loadd(7, bp + b1, 64);
                _tile_dpbf16ps(0, 4, 6);
                _tile_dpbf16ps(1, 4, 7);
                _tile_dpbf16ps(2, 5, 6);
                _tile_dpbf16ps(3, 5, 7);
                if (!ablo)
                    continue;
                _tile_loadd(6, bplo + b0, 64);
                _tile_loadd(7, bplo + b1, 64);
                _tile_dpbf16ps(0, 4, 6);
                _tile_dpbf16ps(1, 4, 7);
                _tile_dpbf16ps(2, 5, 6);
                _tile_dpbf16ps(3, 5, 7);
                _tile_loadd(4, ablo + (size_t)i * K + k0, K * 2);
                _tile_loadd(5, ablo + (size_t)(i + 16) * K + k0, K * 2);
                _tile_loadd(6, bp + b0, 64);
                _tile_loadd(7, bp + b1, 64);
                _tile_dpbf16ps(0, 4, 6);
                _tile_dpbf16ps(1, 4, 7);
                _tile_dpbf16ps(2, 5, 6);
                _tile_dpbf16ps(3, 5, 7);
            }
            _tile_stored(0, c + (size_t)i * N + n0, N * 4);
            _tile_stored(1, c + (size_t)i * N + n0 + 16, N * 4);
            _tile_stored(2, c + (size_t)(i + 16) * N + n0, N * 4);
            _tile_stored(3, c + (size_t)(i + 16) * N + n0 + 16, N * 4);
        }
    _tile_release();
}

#endif

/* the largest |C − exact| over 4096 sampled elements, relative to the largest |exact| among them */
static double error_of(const float *c, const float *a, const float *b, int M, int K, int N)
{
    double worst = 0, scale = 0;
    for (int s = 0; s < 4096; ++s) {
        const int i = (int)((s * 2654435761u) % (unsigned)M), j = (int)((s * 40503u + 7) % (unsigned)N);
        double exact = 0;
        for (int k = 0; k < K; ++k)
            exact += (double)a[(size_t)i * K + k] * b[(size_t)k * N + j];
        worst = fmax(worst, fabs(c[(size_t)i * N + j] - exact));
        scale = fmax(scale, fabs(exact));
    }
    return worst / scale;
}

int main(void)
{
#ifdef __AMX_BF16__
    if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) != 0) {
        perror("arch_prctl: AMX's tile data");
        return 1;
    }
    const int ways = 6;
#else
    const int ways = 4; /* no AMX on this CPU (or this compiler's -march) */
#endif
    const int shapes[][3] = {{512, 768, 768}, {512, 768, 3072}, {512, 3072, 768}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        const int M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];
        float *a = aligned_alloc(64, sizeof(float) * M * K), *b = aligned_alloc(64, sizeof(float) * K * N),
              *c = aligned_alloc(64, sizeof(float) * M * N), *bp = aligned_alloc(64, sizeof(float) * K * N);
        uint32_t *ap = aligned_alloc(64, sizeof(uint32_t) * M * K / 2), *bq = aligned_alloc(64, sizeof(uint32_t) * K * N / 2),
                 *bx = aligned_alloc(64, sizeof(uint32_t) * K * N / 2), *bxlo = aligned_alloc(64, sizeof(uint32_t) * K * N / 2);
        uint16_t *abf = aligned_alloc(64, sizeof(uint16_t) * M * K), *ablo = aligned_alloc(64, sizeof(uint16_t) * M * K);
        srand(1);
        for (size_t i = 0; i < (size_t)M * K; ++i)
            a[i] = (float)rand() / RAND_MAX * 2 - 1;
        for (size_t i = 0; i < (size_t)K * N; ++i)
            b[i] = ((float)rand() / RAND_MAX * 2 - 1) * 0.05f;
        pack_f32(bp, b, K, N);
        pack_bf16(bq, b, K, N);
        pack_amx(bx, b, K, N, 0);
        pack_amx(bxlo, b, K, N, 1);
        const double flops = 2.0 * M * K * N;
        for (int way = 0; way < ways; ++way) {
            double best = 1e30;
            for (int round = 0; round < 7; ++round) {
                const double t0 = now();
                if (way == 0)
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
                else if (way == 1)
                    tile_f32(c, a, bp, M, K, N);
                else if (way < 4)
                    tile_bf16(c, way == 2 ? a : NULL, ap, bq, M, K, N);
#ifdef __AMX_BF16__
                else
                    tile_amx(c, a, abf, way == 5 ? ablo : NULL, bx, way == 5 ? bxlo : NULL, M, K, N);
#endif
                best = fmin(best, now() - t0);
            }
            printf("%4d × %4d × %4d  %-34s %7.2f ms  %6.1f GFLOP/s  largest error %.2e\n", M, K, N,
                way == 0       ? "OpenBLAS sgemm"
                    : way == 1 ? "float32 tile (FMA)"
                    : way == 2 ? "bfloat16 tile (VDPBF16PS)"
                    : way == 3 ? "bfloat16 tile, A converted before"
                    : way == 4 ? "AMX tiles (TDPBF16PS)"
                               : "AMX tiles, bf16x3",
                best * 1e3, flops / best * 1e-9, error_of(c, a, b, M, K, N));
        }
        free(a), free(b), free(c), free(bp), free(ap), free(bq), free(bx), free(bxlo), free(abf), free(ablo);
    }
    return 0;
}
