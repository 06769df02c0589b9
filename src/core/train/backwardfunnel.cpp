// The backward of Funnel-Transformer's ops (model/funnel.h; engine/programfunnel.cpp).
#include "ops/ops.h"
#include "train/backwardpass.h"

namespace atlas {

// Q = queryIn W[0:D]ᵀ + b[0:D], [K V] = in W[D:3D]ᵀ + b[D:3D] (GPT-2's c_attn, held [3D, D], by rows).
void BackwardPass::pooledProjectionsBackward(int i, const Tensor &dq, const Tensor &dk, const Tensor &dv,
    const Tensor &in, Tensor &din, const Tensor &queryIn, Tensor &dqueryIn)
{
    const std::string qkv = param(i, BlockPart::Qkv);
    const int64_t D = m_c.dModel;
    const ConstMatrixMap w = blocks()[size_t(i)].weight(BlockPart::Qkv).matrix();
    MatrixMap dw = grad(qkv + ".weight").matrix();
    float *db = grad(qkv + ".bias").data();
    Tensor dquery({T, D}), dkv({T, 2 * D});
    ops::split_heads_backward(dquery, {&dq});
    ops::split_heads_backward(dkv, {&dk, &dv});
    dw.topRows(D).noalias() += dquery.matrix().transpose() * queryIn.matrix();
    RowVectorMap(db, D) += dquery.matrix().colwise().sum();
    dqueryIn.matrix().noalias() += dquery.matrix() * w.topRows(D);
    dw.bottomRows(2 * D).noalias() += dkv.matrix().transpose() * in.matrix();
    RowVectorMap(db + D, 2 * D) += dkv.matrix().colwise().sum();
    din.matrix().noalias() += dkv.matrix() * w.bottomRows(2 * D);
}

Tensor BackwardPass::upsampleBackward(int i, const Tensor &dupsampled)
{
    BackwardStep step(m_s, i, "upsampled");
    Tensor dcompressed({T, m_c.dModel});
    m_dFunnelSkip = Tensor({T, m_c.dModel});
    ops::funnel_upsample_backward(dcompressed, m_dFunnelSkip, dupsampled, m_c.funnel.finalStride());
    return dcompressed;
}

} // namespace atlas
