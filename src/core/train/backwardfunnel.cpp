// The backward of Funnel-Transformer's ops (model/funnel.h; engine/programfunnel.cpp).
#include "ops/ops.h"
#include "train/backwardpass.h"

namespace atlas {

std::string BackwardPass::blockInput(int i) const
{
    return m_c.funnel.upsamplesAt(i) ? layerName(i) + "upsampled" : names::residualStream(m_s, i);
}

Tensor BackwardPass::pooledAttentionSublayer(int i, const Tensor &dmid)
{
    const std::string p = layerName(i);
    const int64_t D = m_c.dModel;
    Tensor dpooled = copyOf(dmid, i, "mid"); // mid = P + F
    Tensor dln1({T, D}), dln1Pooled({T, D});
    attention(i, dmid, act(p + "ln_1"), dln1, &act(p + "ln_1_pooled"), &dln1Pooled);
    Tensor dx({T, D});
    {
        BackwardStep step(m_s, i, "ln_1");
        blockNorm(dx, i, BlockPart::NormAttention, dln1, act(names::residualStream(m_s, i)));
        blockNorm(dpooled, i, BlockPart::NormAttention, dln1Pooled, act(p + "pooled"));
    }
    BackwardStep step(m_s, i, "pooled");
    ops::funnel_pool_backward(dx, dpooled, m_c.funnel.stride(i));
    return dx;
}

// Q = queryIn W[:, 0:D] + b[0:D], [K V] = in W[:, D:3D] + b[D:3D] (GPT-2's c_attn by columns).
void BackwardPass::pooledProjectionsBackward(int i, const Tensor &dq, const Tensor &dk, const Tensor &dv,
    const Tensor &in, Tensor &din, const Tensor &queryIn, Tensor &dqueryIn)
{
    const std::string qkv = param(i, BlockPart::Qkv);
    const int64_t D = m_c.dModel;
    const ConstMatrixMap w = blocks()[size_t(i)].attnWeight.matrix();
    MatrixMap dw = grad(qkv + ".weight").matrix();
    float *db = grad(qkv + ".bias").data();
    Tensor dquery({T, D}), dkv({T, 2 * D});
    ops::split_heads_backward(dquery, {&dq});
    ops::split_heads_backward(dkv, {&dk, &dv});
    dw.leftCols(D).noalias() += queryIn.matrix().transpose() * dquery.matrix();
    RowVectorMap(db, D) += dquery.matrix().colwise().sum();
    dqueryIn.matrix().noalias() += dquery.matrix() * w.leftCols(D).transpose();
    dw.rightCols(2 * D).noalias() += in.matrix().transpose() * dkv.matrix();
    RowVectorMap(db + D, 2 * D) += dkv.matrix().colwise().sum();
    din.matrix().noalias() += dkv.matrix() * w.rightCols(2 * D).transpose();
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
