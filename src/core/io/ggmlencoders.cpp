#include "io/ggmlencoders.h"

#include "io/ggmlblocks.h"
#include "io/weightvalues.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

// Compiled with -ffp-contract=off, as io/ggmltypes.cpp (src/core/CMakeLists.txt): ggml's x·id + 8.5 is a product
// rounded, then a sum rounded.
namespace atlas {

namespace {

using ggml::half;
using ggml::kQkK;
using ggml::scaleAndMin;

void putU16(unsigned char *p, uint16_t v)
{
    p[0] = uint8_t(v & 0xFF);
    p[1] = uint8_t(v >> 8);
}

// ggml's nearest_int: round half to even through the float adder (|x| < 2²²).
int nearestInt(float x)
{
    const float shifted = x + 12582912.0f;
    return int(std::bit_cast<uint32_t>(shifted) & 0x007FFFFFu) - 0x00400000;
}

// make_qkx2_quants: a scale and a minimum for n values on levels 0 … nmax, the levels chosen by a weighted
// least-squares search over nstep + 1 trial scales; returns the scale, the minimum (negated) in `theMin`.
float scaleAndMinimum(int n, int nmax, const float *x, const float *weights, uint8_t *levels, float *theMin,
    uint8_t *trial, float rmin, float rdelta, int nstep)
{
    float min = x[0], max = x[0], sumW = weights[0], sumX = sumW * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min)
            min = x[i];
        if (x[i] > max)
            max = x[i];
        const float w = weights[i];
        sumW += w;
        sumX += w * x[i];
    }
    if (min > 0)
        min = 0;
    if (max == min) {
        std::fill_n(levels, n, uint8_t(0));
        *theMin = -min;
        return 0.0f;
    }
    float iscale = float(nmax) / (max - min);
    float scale = 1 / iscale;
    float bestError = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearestInt(iscale * (x[i] - min));
        levels[i] = uint8_t(std::max(0, std::min(nmax, l)));
        const float diff = scale * float(levels[i]) + min - x[i];
        bestError += weights[i] * (diff * diff);
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * float(is) + float(nmax)) / (max - min);
        float sumL = 0, sumL2 = 0, sumXl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(0, std::min(nmax, nearestInt(iscale * (x[i] - min))));
            trial[i] = uint8_t(l);
            const float w = weights[i];
            sumL += w * float(l);
            sumL2 += w * float(l) * float(l);
            sumXl += w * float(l) * x[i];
        }
        const float D = sumW * sumL2 - sumL * sumL;
        if (D > 0) {
            float thisScale = (sumW * sumXl - sumX * sumL) / D;
            float thisMin = (sumL2 * sumX - sumL * sumXl) / D;
            if (thisMin > 0) {
                thisMin = 0;
                thisScale = sumXl / sumL2;
            }
            float error = 0;
            for (int i = 0; i < n; ++i) {
                const float diff = thisScale * float(trial[i]) + thisMin - x[i];
                error += weights[i] * (diff * diff);
            }
            if (error < bestError) {
                std::copy_n(trial, n, levels);
                bestError = error;
                scale = thisScale;
                min = thisMin;
            }
        }
    }
    *theMin = -min;
    return scale;
}

} // namespace

void encodeF32(const float *x, unsigned char *b)
{
    std::memcpy(b, x, sizeof(float));
}

void encodeF16(const float *x, unsigned char *b)
{
    putU16(b, floatToHalf(*x));
}

// quantize_row_q4_0_ref: the scale from the value of largest magnitude, with its sign, mapped to −8.
void encodeQ4_0(const float *x, unsigned char *b)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; ++j)
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    const float d = max / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    putU16(b, floatToHalf(d));
    for (int j = 0; j < 16; ++j) {
        const auto q0 = uint8_t(std::min(15, int(int8_t(x[j] * id + 8.5f))));
        const auto q1 = uint8_t(std::min(15, int(int8_t(x[j + 16] * id + 8.5f))));
        b[2 + j] = uint8_t(q0 | (q1 << 4));
    }
}

// quantize_row_q8_0_ref: the scale maps the largest magnitude to 127, each value rounded half away from zero.
void encodeQ8_0(const float *x, unsigned char *b)
{
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j)
        amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    putU16(b, floatToHalf(d));
    for (int j = 0; j < 32; ++j)
        b[2 + j] = uint8_t(int8_t(std::round(x[j] * id)));
}

// quantize_row_q4_K_ref: eight sub-blocks of 32, each with a 6-bit scale and minimum relative to the super-block's
// two half-precision factors.
void encodeQ4_K(const float *x, unsigned char *b)
{
    uint8_t levels[kQkK], trial[32];
    float weights[32], mins[8], scales[8];
    float maxScale = 0, maxMin = 0;
    for (int j = 0; j < 8; ++j) {
        float sumX2 = 0;
        for (int l = 0; l < 32; ++l)
            sumX2 += x[32 * j + l] * x[32 * j + l];
        const float average = std::sqrt(sumX2 / 32);
        for (int l = 0; l < 32; ++l)
            weights[l] = average + std::fabs(x[32 * j + l]);
        scales[j] = scaleAndMinimum(32, 15, x + 32 * j, weights, levels + 32 * j, &mins[j], trial, -1.0f, 0.1f, 20);
        if (scales[j] > maxScale)
            maxScale = scales[j];
        if (mins[j] > maxMin)
            maxMin = mins[j];
    }
    const float inverseScale = maxScale > 0 ? 63.0f / maxScale : 0.0f;
    const float inverseMin = maxMin > 0 ? 63.0f / maxMin : 0.0f;
    unsigned char *packed = b + 4;
    std::fill_n(packed, 12, uint8_t(0));
    for (int j = 0; j < 8; ++j) {
        const auto ls = uint8_t(std::min(63, int(uint8_t(nearestInt(inverseScale * scales[j])))));
        const auto lm = uint8_t(std::min(63, int(uint8_t(nearestInt(inverseMin * mins[j])))));
        if (j < 4) {
            packed[j] = ls;
            packed[j + 4] = lm;
        } else {
            packed[j + 4] = uint8_t((ls & 0x0F) | ((lm & 0x0F) << 4));
            packed[j - 4] |= uint8_t((ls >> 4) << 6);
            packed[j] |= uint8_t((lm >> 4) << 6);
        }
    }
    putU16(b, floatToHalf(maxScale / 63.0f));
    putU16(b + 2, floatToHalf(maxMin / 63.0f));
    for (int j = 0; j < 8; ++j) {
        int scale, min;
        scaleAndMin(packed, j, scale, min);
        const float d = half(b) * float(scale);
        if (d == 0.0f)
            continue;
        const float dm = half(b + 2) * float(min);
        for (int l = 0; l < 32; ++l)
            levels[32 * j + l] = uint8_t(std::max(0, std::min(15, nearestInt((x[32 * j + l] + dm) / d))));
    }
    unsigned char *q = b + 16;
    for (int j = 0; j < kQkK; j += 64, q += 32)
        for (int l = 0; l < 32; ++l)
            q[l] = uint8_t(levels[j + l] | (levels[j + l + 32] << 4));
}

} // namespace atlas
