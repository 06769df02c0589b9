// The backward of Sparse Sinkhorn attention (model/sinkhorn.h; engine/programsinkhorn.cpp).
#include "ops/ops.h"
#include "ops/sinkhorn.h"
#include "train/backwardpass.h"

namespace atlas {

void BackwardPass::sinkhornBackward(int i, Tensor &dmasked, const Tensor &dprobs)
{
    const std::string p = layerName(i);
    const Tensor &S = act(p + "attn.sort");
    m_dSort = Tensor(S.shape());
    ops::sinkhorn_attention_backward(
        dmasked, m_dSort, dprobs, act(p + "attn.block_probs"), act(p + "attn.masked"), S, m_c.sinkhorn.block);
}

// S = Sinkhorn((R + G)/τ), R = F W_proj[:, 0:N] + b_proj[0:N], F = ReLU(P W_fc + b_fc), P = block sums of `in`.
void BackwardPass::sortingNetworkBackward(int i, Tensor &din)
{
    if (m_input.sortSwitchedOff) { // S = I was given, not computed: the sorting network gets no gradient
        m_dSort = Tensor();
        return;
    }
    BackwardStep step(m_s, i, "sort_net");
    const std::string p = layerName(i), fc = param(i, BlockPart::SortFc), proj = param(i, BlockPart::SortProj);
    const SinkhornLayout &sk = m_c.sinkhorn;
    const BlockWeights &b = blocks()[size_t(i)];
    const int64_t N = m_dSort.dim(0), D = m_c.dModel;
    const Tensor *noise = m_trace->contains(p + "attn.sort_noise") ? &act(p + "attn.sort_noise") : nullptr;
    Tensor dlogits({N, N});
    ops::sinkhorn_backward(dlogits, m_dSort, act(p + "attn.sort_logits"), noise, sk.iterations, sk.temperature);
    const Tensor &hidden = act(p + "attn.sort_hidden");
    grad(proj + ".weight").matrix().topRows(N).noalias() += dlogits.matrix().transpose() * hidden.matrix();
    RowVectorMap(grad(proj + ".bias").data(), N) += dlogits.matrix().colwise().sum();
    Tensor dhidden({N, D});
    dhidden.matrix().noalias() = dlogits.matrix() * b.weight(BlockPart::SortProj).matrix().topRows(N);
    dhidden.matrix() = dhidden.matrix().cwiseProduct((hidden.matrix().array() > 0.0f).cast<float>().matrix());
    Tensor dpooled({N, D});
    linearBackward(dpooled, fc, dhidden, act(p + "attn.sort_pooled"), b.weight(BlockPart::SortFc));
    ops::block_sum_backward(din, dpooled, sk.block);
    m_dSort = Tensor();
}

} // namespace atlas
