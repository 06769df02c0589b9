#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace atlas::ops {

float span_ramp_value(float z, float ramp, int64_t distance)
{
    return std::clamp((ramp + z - float(distance)) / ramp, 0.0f, 1.0f);
}

void span_mask_forward(Tensor &mask, const std::vector<float> &spans, float ramp)
{
    if (mask.rank() != 3 || mask.dim(1) != mask.dim(2) || int64_t(spans.size()) != mask.dim(0))
        throw Error("span mask: a mask " + mask.shapeString() + " for " + std::to_string(spans.size())
            + " spans (expected (H,T,T) with one span per head)");
    if (!(ramp > 0))
        throw Error("span mask: the ramp R must be positive");
    const int64_t H = mask.dim(0), T = mask.dim(1);
    for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < T; ++j)
                mask.data()[(h * T + i) * T + j] = j <= i ? span_ramp_value(spans[size_t(h)], ramp, i - j) : 0.0f;
}

void span_softmax_forward(Tensor &out, const Tensor &inp, const Tensor &mask)
{
    requireShape(out, inp.shape(), "span softmax out");
    requireShape(mask, inp.shape(), "span softmax mask");
    const int64_t N = inp.shape().back(), rows = inp.numel() / N;
    constexpr float kMasked = -std::numeric_limits<float>::infinity();
    parallelFor(rows, 65536 / std::max<int64_t>(N, 1), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const float *x = inp.data() + r * N, *m = mask.data() + r * N;
            float *y = out.data() + r * N;
            // exp is shifted by the largest score the mask lets through: a key outside the span cannot make every
            // key inside it underflow.
            float top = kMasked;
            for (int64_t j = 0; j < N; ++j)
                if (m[j] > 0.0f)
                    top = std::max(top, x[j]);
            double sum = 0.0;
            for (int64_t j = 0; j < N; ++j) {
                y[j] = m[j] > 0.0f && x[j] != kMasked ? m[j] * std::exp(x[j] - top) : 0.0f;
                sum += y[j];
            }
            const float scale = sum > 0.0 ? float(1.0 / sum) : 0.0f; // no key in reach: the row carries no weight
            for (int64_t j = 0; j < N; ++j)
                y[j] *= scale;
        }
    });
}

void span_softmax_backward(
    Tensor &dinp, std::vector<float> &dspans, const Tensor &dout, const Tensor &out, const Tensor &mask, float ramp)
{
    requireShape(dinp, out.shape(), "span softmax backward dinp");
    requireShape(dout, out.shape(), "span softmax backward dout");
    requireShape(mask, out.shape(), "span softmax backward mask");
    if (int64_t(dspans.size()) != out.dim(0))
        throw Error("span softmax backward: " + std::to_string(dspans.size()) + " span gradients for "
            + std::to_string(out.dim(0)) + " heads");
    const int64_t H = out.dim(0), N = out.shape().back(), rowsPerHead = out.numel() / N / H;
    parallelFor(H, 1, [&](int64_t begin, int64_t end) {
        for (int64_t h = begin; h < end; ++h) {
            double dz = 0.0;
            for (int64_t r = h * rowsPerHead; r < (h + 1) * rowsPerHead; ++r) {
                const float *a = out.data() + r * N, *g = dout.data() + r * N, *m = mask.data() + r * N;
                float *ds = dinp.data() + r * N;
                double dot = 0.0;
                for (int64_t j = 0; j < N; ++j)
                    dot += double(a[j]) * double(g[j]);
                for (int64_t j = 0; j < N; ++j) {
                    const double centred = double(g[j]) - dot;
                    ds[j] += float(double(a[j]) * centred);
                    if (m[j] > 0.0f && m[j] < 1.0f) // on the ramp: ∂m/∂z = 1/R, and a_j / m_j = e^{s_j} / Σ
                        dz += double(a[j]) / double(m[j]) * centred / double(ramp);
                }
            }
            dspans[size_t(h)] += float(dz);
        }
    });
}

} // namespace atlas::ops
