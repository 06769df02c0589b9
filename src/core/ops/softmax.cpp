#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "util/parallel.h"

#include <algorithm>
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
            // A masked score (−∞) gets exactly 0. Eigen's vectorised exp clamps its argument near −88, so without the
            // second loop a masked key would keep about 1e-38 on CPUs without AVX-512 (tst_engine_parity). Not by
            // Eigen's select: Eigen 3.4 evaluates a select one coefficient at a time, the exp by libm's scalar expf
            // (a sixth of a Qwen2.5-0.5B forward's time at 512 tokens).
            y = (x - m).exp();
            float *yp = y.data();
            const float *xp = x.data();
            for (int64_t i = 0; i < N; ++i) // a vectorised select
                yp[i] = xp[i] == -std::numeric_limits<float>::infinity() ? 0.0f : yp[i];
            y /= y.sum();
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

} // namespace atlas::ops
