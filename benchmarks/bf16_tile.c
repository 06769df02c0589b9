/* One core's matrix product C = A B three ways (issue 62, docs/benchmarks.md "AVX512-BF16"): OpenBLAS's sgemm, a
 * float32 AVX-512 register tile (8 rows × 32 columns, B packed in panels of 32 columns, as tensor/matrixproduct.h
 * packs it) and the same tile with VDPBF16PS, which multiplies pairs of bfloat16 values and adds them into float32.
 * A is converted to bfloat16 inside the timed call (it is a layer's input); B is packed once, outside it (a layer's
 * weights). Each product's largest error against a double-precision sum is printed beside its time.
 *   cc -O3 -march=native benchmarks/bf16_tile.c -lopenblas -lm -o /tmp/bf16_tile && OPENBLAS_NUM_THREADS=1 /tmp/bf16_tile
 * Needs a CPU with AVX512-BF16 (Intel Cooper Lake, Sapphire Rapids and later; AMD Zen 4 and later). */
#include <cblas.h>
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    const int shapes[][3] = {{512, 768, 768}, {512, 768, 3072}, {512, 3072, 768}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        const int M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];
        float *a = aligned_alloc(64, sizeof(float) * M * K), *b = aligned_alloc(64, sizeof(float) * K * N),
              *c = aligned_alloc(64, sizeof(float) * M * N), *bp = aligned_alloc(64, sizeof(float) * K * N);
        uint32_t *ap = aligned_alloc(64, sizeof(uint32_t) * M * K / 2), *bq = aligned_alloc(64, sizeof(uint32_t) * K * N / 2);
        srand(1);
        for (size_t i = 0; i < (size_t)M * K; ++i)
            a[i] = (float)rand() / RAND_MAX * 2 - 1;
        for (size_t i = 0; i < (size_t)K * N; ++i)
            b[i] = ((float)rand() / RAND_MAX * 2 - 1) * 0.05f;
        pack_f32(bp, b, K, N);
        pack_bf16(bq, b, K, N);
        const double flops = 2.0 * M * K * N;
        for (int way = 0; way < 4; ++way) {
            double best = 1e30;
            for (int round = 0; round < 7; ++round) {
                const double t0 = now();
                if (way == 0)
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
                else if (way == 1)
                    tile_f32(c, a, bp, M, K, N);
                else
                    tile_bf16(c, way == 2 ? a : NULL, ap, bq, M, K, N);
                best = fmin(best, now() - t0);
            }
            printf("%4d × %4d × %4d  %-34s %7.2f ms  %6.1f GFLOP/s  largest error %.2e\n", M, K, N,
                way == 0       ? "OpenBLAS sgemm"
                    : way == 1 ? "float32 tile (FMA)"
                    : way == 2 ? "bfloat16 tile (VDPBF16PS)"
                               : "bfloat16 tile, A converted before",
                best * 1e3, flops / best * 1e-9, error_of(c, a, b, M, K, N));
        }
        free(a), free(b), free(c), free(bp), free(ap), free(bq);
    }
    return 0;
}
