// Sparse Sinkhorn attention's ops (Tay et al. 2020; model/sinkhorn.h): the sorting network and the attention over
// each block's own keys and its sorted block.
#include "engine/programbuilder.h"
#include "ops/sinkhorn.h"

#include <cstdio>

namespace atlas {

void ProgramBuilder::sortingNetwork(int i, const std::string &in)
{
    const std::string p = names::layerPrefix(m_s, i);
    const SinkhornLayout &sk = m_c.sinkhorn;
    const int64_t D = m_c.dModel, N = sk.blocks(int(T));
    const std::string b = std::to_string(sk.block), n = std::to_string(N);
    unary(p + "attn.sort_pooled", "pool blocks (Sinkhorn)", i, in, {N, D},
        "P_J = Σ LN₁(X)_t over the " + b + " tokens t of block J (" + n + " blocks)",
        [block = sk.block](Tensor &o, const Tensor &x, const Model &) { ops::block_sum_forward(o, x, block); });
    add(p + "sort_net", "sorting network", i, {p + "attn.sort_pooled"},
        {{p + "attn.sort_hidden", {N, D}, "F = ReLU(P W_fc + b_fc)"},
            {p + "attn.sort_logits", {N, N},
                "R = F W_proj[:, 0:" + n + "] + b_proj[0:" + n + "]  (R_IJ: how much block J belongs at place I)"}},
        [p, i, N, D](const Model &m, const Input &, const Trace &tr) {
            const BlockWeights &w = m.blocks[size_t(i)];
            Tensor hidden({N, D}), logits({N, N});
            ops::linear_forward(
                hidden, tr.tensor(p + "attn.sort_pooled"), w.weight(BlockPart::SortFc), w.bias(BlockPart::SortFc));
            hidden.matrix() = hidden.matrix().cwiseMax(0.0f);
            logits.matrix().noalias() = hidden.matrix() * w.weight(BlockPart::SortProj).matrix().topRows(N).transpose();
            logits.matrix().rowwise() += ConstRowVectorMap(w.bias(BlockPart::SortProj).data(), N);
            return Outputs {std::move(hidden), std::move(logits)};
        });
    if (m_input.sortSwitchedOff) {
        add(p + "sinkhorn", "sort switched off", i, {p + "attn.sort_logits"},
            {{p + "attn.sort", {N, N}, "S = I  (the sort switched off: each block's sorted half is itself)"}},
            [N](const Model &, const Input &, const Trace &) {
                Tensor S({N, N});
                S.matrix().setIdentity();
                return Outputs {std::move(S)};
            });
        return;
    }
    const uint64_t seed = m_input.sortingNoiseSeed;
    char tau[32];
    std::snprintf(tau, sizeof tau, "%g", double(sk.temperature));
    const std::string k = std::to_string(sk.iterations);
    std::vector<OpOutput> outputs;
    if (seed)
        outputs.push_back({p + "attn.sort_noise", {N, N}, "G ~ Gumbel(0, 1)  (training only)"});
    outputs.push_back({p + "attn.sort", {N, N},
        "S = exp(Z_" + k + "), Z₀ = " + (seed ? "(R + G)" : "R") + " / " + std::string(tau) + ", " + k
            + " times: each row minus its log-sum-exp, then each column  (Sinkhorn: a soft permutation of the "
              "blocks)"});
    add(p + "sinkhorn", "Sinkhorn normalisation", i, {p + "attn.sort_logits"}, outputs,
        [p, i, N, seed, sk](const Model &, const Input &, const Trace &tr) {
            Outputs out;
            Tensor noise({N, N}), S({N, N});
            if (seed)
                ops::gumbel_noise(noise, seed + uint64_t(i));
            ops::sinkhorn_forward(
                S, tr.tensor(p + "attn.sort_logits"), seed ? &noise : nullptr, sk.iterations, sk.temperature);
            if (seed)
                out.push_back(std::move(noise));
            out.push_back(std::move(S));
            return out;
        });
}

void ProgramBuilder::sinkhornAttention(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads;
    const int block = m_c.sinkhorn.block;
    const std::string b = std::to_string(block);
    add(p + "normalise", "Sinkhorn attention", i, {p + "attn.masked", p + "attn.sort"},
        {{p + "attn.block_probs", {H, T, 2 * int64_t(block)},
             "[a c] = softmax([u w]), uᵣ = q_t · Σ_J S_IJ k_J·" + b + "+r / √d (the sorted block), wᵣ = S′(t, I·" + b
                 + " + r) (its own block): t in block I, r < " + b},
            {p + "attn.probs", {H, T, T}, "A(t, J·" + b + " + r) = aᵣ S_IJ + [J = I] cᵣ  (the weight of each value)"}},
        [p, H, T = T, block](const Model &, const Input &, const Trace &tr) {
            Tensor blockProbs({H, T, 2 * int64_t(block)}), probs({H, T, T});
            ops::sinkhorn_attention_forward(
                blockProbs, probs, tr.tensor(p + "attn.masked"), tr.tensor(p + "attn.sort"), block);
            return Outputs {std::move(blockProbs), std::move(probs)};
        });
}

} // namespace atlas
