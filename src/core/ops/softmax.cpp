#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "ops/vectorexp.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace atlas::ops {

void softmax_forward(Tensor &out, const Tensor &inp)
{
    const int64_t N = inp.shape().back(), rows = inp.numel() / N;
    parallelFor(rows, 65536 / std::max<int64_t>(N, 1), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            Eigen::Map<const Eigen::ArrayXf> x(inp.data() + r * N, N);
            Eigen::Map<Eigen::ArrayXf> y(out.data() + r * N, N);
            const float m = x.maxCoeff();
            if (m == -std::numeric_limits<float>::infinity()) {
                y.setZero(); // no key may be attended: the row carries no weight at all
                continue;
            }
            y /= expShiftedMasked(x.data(), y.data(), N, m);
        }
    });
}

void softmax_backward(Tensor &dinp, const Tensor &dout, const Tensor &out)
{
    requireShape(dinp, out.shape(), "softmax backward dinp");
    requireShape(dout, out.shape(), "softmax backward dout");
    const int64_t N = out.shape().back(), rows = out.numel() / N;
    parallelFor(rows, 65536 / std::max<int64_t>(N, 1), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            Eigen::Map<const Eigen::ArrayXf> y(out.data() + r * N, N), g(dout.data() + r * N, N);
            const float dot = (y * g).sum();
            Eigen::Map<Eigen::ArrayXf>(dinp.data() + r * N, N) += y * (g - dot);
        }
    });
}

void sink_softmax_forward(Tensor &out, Tensor &sinkShare, const Tensor &inp, const Tensor &sinks)
{
    requireShape(out, inp.shape(), "sink softmax output");
    const int64_t H = inp.dim(0), N = inp.shape().back(), rows = inp.numel() / N, perHead = rows / H;
    requireShape(sinks, {H}, "attention sinks");
    requireShape(sinkShare, {H, perHead}, "sink share");
    parallelFor(rows, 65536 / std::max<int64_t>(N, 1), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            Eigen::Map<const Eigen::ArrayXf> x(inp.data() + r * N, N);
            Eigen::Map<Eigen::ArrayXf> y(out.data() + r * N, N);
            const float z = sinks.data()[r / perHead], m = std::max(x.maxCoeff(), z);
            const float sink = std::exp(z - m);
            const float total = expShiftedMasked(x.data(), y.data(), N, m) + sink;
            y /= total;
            sinkShare.data()[r] = sink / total;
        }
    });
}

void sink_softmax_backward(Tensor &dinp, Tensor &dsinks, const Tensor &dout, const Tensor &out, const Tensor &sinkShare)
{
    requireShape(dinp, out.shape(), "sink softmax backward dinp");
    requireShape(dout, out.shape(), "sink softmax backward dout");
    const int64_t H = out.dim(0), N = out.shape().back(), rows = out.numel() / N, perHead = rows / H;
    requireShape(dsinks, {H}, "sink softmax backward dsinks");
    requireShape(sinkShare, {H, perHead}, "sink softmax backward share");
    for (int64_t h = 0; h < H; ++h) {
        double dz = 0;
        for (int64_t r = h * perHead; r < (h + 1) * perHead; ++r) {
            Eigen::Map<const Eigen::ArrayXf> y(out.data() + r * N, N), g(dout.data() + r * N, N);
            const float dot = (y * g).sum();
            Eigen::Map<Eigen::ArrayXf>(dinp.data() + r * N, N) += y * (g - dot);
            dz -= double(sinkShare.data()[r]) * dot; // the sink's own weight has no gradient: it is dropped
        }
        dsinks.data()[h] += float(dz);
    }
}

} // namespace atlas::ops
