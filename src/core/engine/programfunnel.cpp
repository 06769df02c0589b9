// Funnel-Transformer's ops (Dai et al. 2020; model/funnel.h): pooling before a group, the pooling layer's queries,
// and the upsampling before the decoder.
#include "engine/programbuilder.h"

namespace atlas {

void ProgramBuilder::funnelPool(int i, const std::string &in)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int stride = m_c.funnel.stride(i), half = stride / 2;
    const std::string s = std::to_string(stride), h = std::to_string(half);
    unary(p + "pooled", "pool pairs (Funnel)", i, in, {T, m_c.dModel},
        "P_t = (X_t + X_t+" + h + ") / 2 for t mod " + s + " = 0 (X_t alone at the end), 0 elsewhere: each token "
            + "pooled with the one beside it at stride " + h + ", the sequence 1/" + s + " as long",
        [stride](Tensor &o, const Tensor &x, const Model &) { ops::funnel_pool_forward(o, x, stride); });
}

void ProgramBuilder::funnelUpsample(int i)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int stride = m_c.funnel.finalStride(), skip = m_c.funnel.skipLayer();
    const std::string compressed = names::residualStream(m_s, i), full = names::residualStream(m_s, skip + 1);
    add(p + "upsampled", "upsample (Funnel)", i, {compressed, full},
        {{p + "upsampled", {T, m_c.dModel},
            "U_t = X_t−(t mod " + std::to_string(stride) + ") + " + full
                + "_t: each compressed token repeated over the " + std::to_string(stride)
                + " positions it covers, plus the full-length stream after layer " + std::to_string(skip)}},
        [compressed, full, stride](const Model &, const Input &, const Trace &tr) {
            const Tensor &c = tr.tensor(compressed), &f = tr.tensor(full);
            Tensor o(f.shape());
            ops::funnel_upsample_forward(o, c, f, stride);
            return Outputs {std::move(o)};
        });
}

// GPT-2's c_attn split (its checkpoint's columns, the held [3D, D]'s rows): the queries from the pooled stream, the
// keys and values from the unpooled one.
void ProgramBuilder::pooledQueryProjections(int i, const std::string &in, const std::string &queryIn)
{
    const std::string p = names::layerPrefix(m_s, i);
    const int64_t D = m_c.dModel, H = m_c.heads, d = m_c.headDim();
    unary(p + "attn.query", "Q projection (pooled)", i, queryIn, {T, D},
        "Q = LN₁(P) W_attn[:, 0:D] + b_attn[0:D]  (the pooled stream's queries)",
        [i, D](Tensor &o, const Tensor &x, const Model &m) {
            const BlockWeights &b = m.blocks[size_t(i)];
            o.matrix().noalias() = x.matrix() * b.weight(BlockPart::Qkv).matrix().topRows(D).transpose();
            o.matrix().rowwise() += ConstRowVectorMap(b.bias(BlockPart::Qkv).data(), D);
        });
    unary(p + "attn.kv", "K/V projection (unpooled)", i, in, {T, 2 * D},
        "[K V] = LN₁(X) W_attn[:, D:3D] + b_attn[D:3D]  (the unpooled stream's keys and values)",
        [i, D](Tensor &o, const Tensor &x, const Model &m) {
            const BlockWeights &b = m.blocks[size_t(i)];
            o.matrix().noalias() = x.matrix() * b.weight(BlockPart::Qkv).matrix().bottomRows(2 * D).transpose();
            o.matrix().rowwise() += ConstRowVectorMap(b.bias(BlockPart::Qkv).data() + D, 2 * D);
        });
    add(p + "split", "split heads", i, {p + "attn.query", p + "attn.kv"},
        {{p + "attn.q", {H, T, d}, "Q_h = Q[:, h·d : (h+1)·d]"}, {p + "attn.k", {H, T, d}, "K_h = K[:, h·d : (h+1)·d]"},
            {p + "attn.v", {H, T, d}, "V_h = V[:, h·d : (h+1)·d]"}},
        [p, H, T = T, d](const Model &, const Input &, const Trace &tr) {
            Tensor q({H, T, d}), k({H, T, d}), v({H, T, d});
            ops::split_heads_forward({&q}, tr.tensor(p + "attn.query"), int(H));
            ops::split_heads_forward({&k, &v}, tr.tensor(p + "attn.kv"), int(H));
            return Outputs {std::move(q), std::move(k), std::move(v)};
        });
}

} // namespace atlas
