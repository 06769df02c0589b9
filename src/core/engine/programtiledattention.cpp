// Exact attention kept on demand (engine/attentiontrace.h): the tiled op that replaces the scores, mask and softmax.
#include "engine/programbuilder.h"

#include <cmath>

namespace atlas {

// The same attention without its [H, T, T] tensors: one op computes C_h a tile of queries × a tile of keys at a time
// and keeps each row's log-sum-exp, from which any head's probabilities are recomputed exactly
// (engine/attentiontrace.h).
void ProgramBuilder::tiledAttention(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t H = m_c.heads, d = m_c.headDim();
    const std::string q = scoredQueries(i), k = scoredKeys(i);
    std::string scores = scoreFormula(i) + "  (d = " + std::to_string(d) + ")";
    if (const float cap = m_c.attentionSoftcap; cap > 0)
        scores += ", soft-capped: c · tanh(S / c), c = " + formulaNumber(cap);
    const std::string sink = m_c.attentionSinks ? " + exp(z_h)" : "";
    std::vector<OpOutput> outputs
        = {{p + "attn.context", {H, T, d},
               "C_h = A_h V_h, Aᵢⱼ = exp(S′ᵢⱼ − ℓᵢ); S′ᵢⱼ = Sᵢⱼ if " + keyRule(i) + ", else −∞; " + scores
                   + ". Computed 64 queries × 256 keys at a time with a running maximum: A is not kept"},
            {p + "attn.lse", {H, T},
                "ℓᵢ = log(Σⱼ exp(S′ᵢⱼ)" + sink + "): with Q and K it gives any head's Aᵢⱼ = exp(S′ᵢⱼ − ℓᵢ) again"}};
    if (m_c.attentionSinks)
        outputs.push_back({p + "attn.sink", {H, T}, "the sink's share of row i: exp(z_h − ℓᵢ)"});
    add(p + "attend", "attention (tiled)", i, {q, k, p + "attn.v"}, outputs,
        [p, i, q, k, H, T = T, d, sinks = m_c.attentionSinks, src = m_source](
            const Model &m, const Input &in, const Trace &tr) {
            const ops::ScoreRule rule = scoreRule(m, paddingOf(in, src), i);
            Outputs out {Tensor::uninitialized({H, T, d}), Tensor::uninitialized({H, T})};
            ops::tiled_attention_forward(out[0], out[1], tr.tensor(q), tr.tensor(k), tr.tensor(p + "attn.v"), rule);
            if (sinks) {
                Tensor share = Tensor::uninitialized({H, T});
                for (int64_t h = 0; h < H; ++h)
                    for (int64_t t = 0; t < T; ++t)
                        share.data()[h * T + t] = std::exp(rule.sinks[size_t(h)] - out[1].data()[h * T + t]);
                out.push_back(std::move(share));
            }
            return out;
        });
}

} // namespace atlas
