#include "ops/ops.h"

#include <limits>

namespace atlas::ops {

void funnel_pool_forward(Tensor &out, const Tensor &x, int stride)
{
    const int64_t T = x.dim(0), half = stride / 2;
    MatrixMap o = out.matrix();
    ConstMatrixMap in = x.matrix();
    o.setZero();
    for (int64_t t = 0; t < T; t += stride) {
        if (t + half < T)
            o.row(t) = (in.row(t) + in.row(t + half)) * 0.5f;
        else
            o.row(t) = in.row(t);
    }
}

void funnel_pool_backward(Tensor &dx, const Tensor &dout, int stride)
{
    const int64_t T = dout.dim(0), half = stride / 2;
    MatrixMap d = dx.matrix();
    ConstMatrixMap g = dout.matrix();
    for (int64_t t = 0; t < T; t += stride) {
        if (t + half < T) {
            d.row(t) += 0.5f * g.row(t);
            d.row(t + half) += 0.5f * g.row(t);
        } else {
            d.row(t) += g.row(t);
        }
    }
}

void funnel_upsample_forward(Tensor &out, const Tensor &compressed, const Tensor &skip, int stride)
{
    const int64_t T = skip.dim(0);
    MatrixMap o = out.matrix();
    ConstMatrixMap c = compressed.matrix(), s = skip.matrix();
    for (int64_t t = 0; t < T; ++t)
        o.row(t) = c.row(t - t % stride) + s.row(t);
}

void funnel_upsample_backward(Tensor &dcompressed, Tensor &dskip, const Tensor &dout, int stride)
{
    const int64_t T = dout.dim(0);
    MatrixMap dc = dcompressed.matrix(), ds = dskip.matrix();
    ConstMatrixMap g = dout.matrix();
    for (int64_t t = 0; t < T; ++t) {
        dc.row(t - t % stride) += g.row(t);
        ds.row(t) += g.row(t);
    }
}

void funnel_mask_keys(Tensor &scores, int stride)
{
    if (stride <= 1)
        return;
    const float minusInf = -std::numeric_limits<float>::infinity();
    const int64_t H = scores.dim(0), T = scores.dim(2);
    for (int64_t h = 0; h < H; ++h) {
        MatrixMap s = scores.slice(h);
        for (int64_t j = 0; j < T; ++j)
            if (j % stride != 0)
                s.col(j).setConstant(minusInf);
    }
}

} // namespace atlas::ops
