#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>

namespace atlas::ops {

void rmsnorm_forward(Tensor &out, const Tensor &inp, const Tensor &weight, float eps)
{
    const int64_t T = inp.dim(0), D = inp.dim(1);
    requireShape(out, inp.shape(), "RMSNorm output");
    requireShape(weight, {D}, "RMSNorm weight");
    ConstRowVectorMap w(weight.data(), D);
    ConstMatrixMap x = inp.matrix();
    MatrixMap o = out.matrix();
    parallelFor(T, 65536 / std::max<int64_t>(D, 1), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const float rms = 1.0f / std::sqrt(x.row(t).squaredNorm() / float(D) + eps);
            o.row(t) = (x.row(t).array() * rms * w.array()).matrix();
        }
    });
}

void rmsnorm_backward(
    Tensor &dinp, Tensor &dweight, const Tensor &dout, const Tensor &inp, const Tensor &weight, float eps)
{
    const int64_t T = inp.dim(0), D = inp.dim(1);
    requireShape(dinp, inp.shape(), "RMSNorm backward dinp");
    requireShape(dout, inp.shape(), "RMSNorm backward dout");
    requireShape(dweight, {D}, "RMSNorm backward dweight");
    ConstRowVectorMap w(weight.data(), D);
    ConstMatrixMap x = inp.matrix(), g = dout.matrix();
    MatrixMap dx = dinp.matrix();
    RowVectorMap dw(dweight.data(), D);
    for (int64_t t = 0; t < T; ++t) {
        const float r = 1.0f / std::sqrt(x.row(t).squaredNorm() / float(D) + eps);
        const Eigen::ArrayXXf xhat = (x.row(t).array() * r);
        const Eigen::ArrayXXf gw = g.row(t).array() * w.array();
        const float mean = (gw * xhat).sum() / float(D);
        dx.row(t).array() += r * (gw - xhat * mean);
        dw.array() += g.row(t).array() * xhat;
    }
}

void layernorm_forward(Tensor &out, const Tensor &inp, const Tensor &weight, const Tensor &bias, float eps)
{
    const int64_t T = inp.dim(0), D = inp.dim(1);
    requireShape(out, inp.shape(), "layernorm output");
    ConstRowVectorMap w(weight.data(), D), b(bias.data(), D);
    ConstMatrixMap x = inp.matrix();
    MatrixMap o = out.matrix();
    parallelFor(T, 65536 / std::max<int64_t>(D, 1), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const float mean = x.row(t).mean();
            const float var = (x.row(t).array() - mean).square().mean();
            const float rstd = 1.0f / std::sqrt(var + eps);
            o.row(t) = ((x.row(t).array() - mean) * rstd * w.array() + b.array()).matrix();
        }
    });
}

// With x̂ = (x − μ) rstd and g = w ⊙ dout, the gradient through the mean and the variance is
// dx = rstd (g − mean(g) − x̂ mean(g ⊙ x̂)) (llm.c's layernorm_backward).
void layernorm_backward(Tensor &dinp, Tensor &dweight, Tensor &dbias, const Tensor &dout, const Tensor &inp,
    const Tensor &weight, float eps)
{
    const int64_t T = inp.dim(0), D = inp.dim(1);
    requireShape(dinp, inp.shape(), "layernorm backward dinp");
    requireShape(dout, inp.shape(), "layernorm backward dout");
    requireShape(dweight, {D}, "layernorm backward dweight");
    requireShape(dbias, {D}, "layernorm backward dbias");
    ConstRowVectorMap w(weight.data(), D);
    ConstMatrixMap x = inp.matrix(), g = dout.matrix();
    MatrixMap dx = dinp.matrix();
    MatrixRM xhat(T, D); // kept for dweight, which sums over rows after the parallel loop
    parallelFor(T, 65536 / std::max<int64_t>(D, 1), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const float mean = x.row(t).mean();
            const float var = (x.row(t).array() - mean).square().mean();
            const float rstd = 1.0f / std::sqrt(var + eps);
            xhat.row(t) = (x.row(t).array() - mean) * rstd;
            const Eigen::ArrayXf gw = (g.row(t).array() * w.array()).transpose();
            const Eigen::ArrayXf xh = xhat.row(t).array().transpose();
            const float gMean = gw.mean(), gxMean = (gw * xh).mean();
            dx.row(t).array() += ((gw - gMean - xh * gxMean) * rstd).transpose();
        }
    });
    RowVectorMap(dbias.data(), D) += g.colwise().sum();
    RowVectorMap(dweight.data(), D) += (g.array() * xhat.array()).matrix().colwise().sum();
}

} // namespace atlas::ops
