#include "engine/blockcomponents.h"

#include "tensor/matrixproduct.h"
#include "util/error.h"

#include <cmath>

namespace atlas {

void moduleForward(Tensor &out, const Tensor &x, const LinearModule &m)
{
    if (m.rows == 0)
        return ops::linear_forward(out, x, m.weight, m.bias);
    if (out.shape() != Shape {x.dim(0), m.rows} || x.dim(1) != m.weight.dim(1))
        throw Error("a fused module's rows: expected input [rows, " + std::to_string(m.weight.dim(1))
            + "] and output [rows, " + std::to_string(m.rows) + "], got " + x.shapeString() + " and "
            + out.shapeString());
    matrixProduct(out.matrix(), x.matrix(), false, m.ownRows(), true, false);
}

Tensor normScale(const Tensor &weight, const ModelConfig &c)
{
    if (!c.normAddsOne)
        return weight;
    Tensor scale = Tensor::uninitialized(weight.shape());
    for (int64_t i = 0; i < weight.numel(); ++i)
        scale.data()[i] = 1.0f + weight.data()[i];
    return scale;
}

void normForward(Tensor &out, const Tensor &x, const Tensor &weight, const Tensor &bias, const ModelConfig &c)
{
    c.norm == NormKind::RmsNorm ? ops::rmsnorm_forward(out, x, normScale(weight, c), c.lnEpsilon)
                                : ops::layernorm_forward(out, x, weight, bias, c.lnEpsilon);
}

void normShare(Tensor &share, const Tensor &sum, const Tensor &weight, const ModelConfig &c)
{
    if (share.shape() != sum.shape() || share.dim(1) != weight.numel())
        throw Error("normShare: a share " + share.shapeString() + " of a sum " + sum.shapeString() + ", weights "
            + weight.shapeString());
    const Tensor scale = c.norm == NormKind::RmsNorm ? normScale(weight, c) : weight;
    const ConstRowVectorMap gamma(scale.data(), scale.numel());
    MatrixMap s = share.matrix();
    const ConstMatrixMap x = sum.matrix();
    for (int64_t r = 0; r < s.rows(); ++r) {
        double spread = 0;
        if (c.norm == NormKind::RmsNorm) {
            spread = x.row(r).cast<double>().squaredNorm() / double(x.cols());
        } else {
            const double mean = x.row(r).cast<double>().mean();
            spread = (x.row(r).cast<double>().array() - mean).square().mean();
            s.row(r).array() -= s.row(r).mean();
        }
        s.row(r) = (s.row(r).array() * gamma.array() * float(1.0 / std::sqrt(spread + c.lnEpsilon))).matrix();
    }
}

std::string normFormula(const ModelConfig &c, const std::string &sub)
{
    const std::string g = "γ" + sub, b = "β" + sub;
    const std::string scale = c.normAddsOne ? "(1 + " + g + ")" : g;
    return c.norm == NormKind::RmsNorm ? "RMS(x) = " + scale + " ⊙ x / √(mean(x²) + ε)  (no mean subtracted, no bias)"
                                       : "LN(x) = " + g + " ⊙ (x − mean(x)) / √(var(x) + ε) + " + b;
}

namespace {

// QK-norm's rows: x [heads, rows, d] as a matrix [heads · rows, d] (each head's rows of d), or [rows, heads · d]
// (each position's heads side by side); and back.
Tensor normRows(const Tensor &x, bool acrossHeads)
{
    const int64_t heads = x.dim(0), rows = x.dim(1), d = x.dim(2);
    if (!acrossHeads) {
        Tensor m = x;
        m.reshape({heads * rows, d});
        return m;
    }
    Tensor m = Tensor::uninitialized({rows, heads * d});
    for (int64_t h = 0; h < heads; ++h)
        m.matrix().block(0, h * d, rows, d) = x.slice(h);
    return m;
}

void addFromRows(Tensor &x, const Tensor &m, bool acrossHeads)
{
    const int64_t heads = x.dim(0), rows = x.dim(1), d = x.dim(2);
    for (int64_t h = 0; h < heads; ++h)
        x.slice(h) += acrossHeads ? m.matrix().block(0, h * d, rows, d) : m.matrix().block(h * rows, 0, rows, d);
}

// Where element k of a row of heads·d (head h = k / d) finds its γ in a weight of Hγ·d: head h reads γ's head
// h / (heads / Hγ), as repeat_kv hands K/V head g to its query heads.
int64_t sharedWeightIndex(int64_t k, int64_t d, int64_t group)
{
    return (k / d / group) * d + k % d;
}

// γ over a row of the matrix normRows(x, true) makes: [Hγ·d] repeated to the row's heads·d.
Tensor rowWeight(const Tensor &weight, int64_t width, int64_t d)
{
    if (weight.numel() == width)
        return weight;
    Tensor w = Tensor::uninitialized({width});
    const int64_t group = width / weight.numel();
    for (int64_t k = 0; k < width; ++k)
        w.data()[k] = weight.data()[sharedWeightIndex(k, d, group)];
    return w;
}

} // namespace

void qkNormForward(Tensor &out, const Tensor &x, const Tensor &stored, const ModelConfig &c)
{
    const Tensor weight = normScale(stored, c); // Gemma 3's q_norm and k_norm scale by 1 + γ too
    const bool across = c.qkNorm == QkNorm::Projections;
    const Tensor rows = normRows(x, across);
    Tensor normed = Tensor::uninitialized(rows.shape());
    ops::rmsnorm_forward(normed, rows, across ? rowWeight(weight, rows.dim(1), x.dim(2)) : weight, c.lnEpsilon);
    if (!across) { // each head's rows of d are already in x's order
        normed.reshape(x.shape());
        out = std::move(normed);
        return;
    }
    out = Tensor(x.shape());
    addFromRows(out, normed, true);
}

void qkNormBackward(
    Tensor &dx, Tensor &dweight, const Tensor &dout, const Tensor &x, const Tensor &stored, const ModelConfig &c)
{
    const Tensor weight = normScale(stored, c);
    const bool across = c.qkNorm == QkNorm::Projections;
    const Tensor rows = normRows(x, across);
    Tensor drows(rows.shape());
    if (!across) {
        ops::rmsnorm_backward(drows, dweight, normRows(dout, false), rows, weight, c.lnEpsilon);
        return addFromRows(dx, drows, false);
    }
    const int64_t width = rows.dim(1), d = x.dim(2), group = width / weight.numel();
    Tensor dwRow({width});
    ops::rmsnorm_backward(drows, dwRow, normRows(dout, true), rows, rowWeight(weight, width, d), c.lnEpsilon);
    addFromRows(dx, drows, true);
    for (int64_t k = 0; k < width; ++k) // a shared γ's gradient sums over the heads that read it
        dweight.data()[sharedWeightIndex(k, d, group)] += dwRow.data()[k];
}

std::string qkNormFormula(const ModelConfig &c, bool keys)
{
    const std::string x = keys ? "K" : "Q", n = keys ? "RMS_k" : "RMS_q";
    const std::string g = c.normAddsOne ? (keys ? "(1 + γ_k)" : "(1 + γ_q)") : (keys ? "γ_k" : "γ_q");
    if (c.qkNorm == QkNorm::Heads)
        return n + "(" + x + "_h) = " + g + " ⊙ " + x + "_h / √(mean(" + x + "_h²) + ε) over each head's d = "
            + std::to_string(c.headDim()) + " dimensions  (one " + g + " for every head)";
    const int64_t heads = keys ? c.kvHeadCount() : c.heads;
    return n + "(" + x + ") = " + g + " ⊙ " + x + " / √(mean(" + x + "²) + ε) over all " + std::to_string(heads)
        + " heads of a position together (" + std::to_string(heads * c.headDim()) + " dimensions), then split";
}

std::vector<BlockPart> qkvParts(const ModelConfig &c)
{
    if (!c.storesConv1d() && c.family != Family::GptNeoX && !c.fusesProjections())
        return {BlockPart::Q, BlockPart::K, BlockPart::V};
    return {BlockPart::Qkv};
}

int64_t qkvWidth(const ModelConfig &c)
{
    return (int64_t(c.heads) + 2 * int64_t(c.kvHeadCount())) * c.headDim();
}

int64_t qkvColumn(const ModelConfig &c, int which, int64_t head)
{
    const int64_t d = c.headDim(), H = c.heads, Hkv = c.kvHeadCount();
    if (c.family == Family::GptNeoX)
        return (3 * head + which) * d;
    return which == 0 ? head * d : which == 1 ? (H + head) * d : (H + Hkv + head) * d;
}

void projectQkv(Tensor &qkv, const Tensor &x, const ModelConfig &c, const BlockWeights &b)
{
    const std::vector<BlockPart> parts = qkvParts(c);
    if (parts.size() == 1)
        return moduleForward(qkv, x, blockModule(c, b, parts[0]));
    const int64_t rows = x.dim(0), Q = c.innerDim(), KV = int64_t(c.kvHeadCount()) * c.headDim();
    Tensor q({rows, Q}), k({rows, KV}), v({rows, KV});
    moduleForward(q, x, blockModule(c, b, BlockPart::Q));
    moduleForward(k, x, blockModule(c, b, BlockPart::K));
    moduleForward(v, x, blockModule(c, b, BlockPart::V));
    qkv.matrix() << q.matrix(), k.matrix(), v.matrix();
}

std::string qkvFormula(const ModelConfig &c)
{
    if (c.fusesProjections())
        return "[Q K V] = X W_qkvᵀ  (one qkv_proj: " + std::to_string(c.heads) + " query, "
            + std::to_string(c.kvHeadCount()) + " key/value heads side by side)";
    if (c.family == Family::GptNeoX)
        return std::string("[q₀ k₀ v₀ q₁ k₁ v₁ …] = X W_qkvᵀ") + (c.qkvBias ? " + b_qkv" : "")
            + "  (per head h: q_h, k_h, v_h)";
    if (c.storesConv1d())
        return "[Q K V] = X W_attn + b_attn";
    const std::string bias = c.qkvBias ? " + b" : "";
    return "[Q K V] = [X W_qᵀ" + bias + "  X W_kᵀ" + bias + "  X W_vᵀ" + bias + "]  (" + std::to_string(c.heads)
        + " query, " + std::to_string(c.kvHeadCount()) + " key/value heads)";
}

QkvHeads splitQkv(const Tensor &qkv, const ModelConfig &c, bool repeatKv)
{
    const int64_t H = c.heads, Hkv = c.kvHeadCount(), d = c.headDim(), rows = qkv.dim(0);
    const int64_t shared = repeatKv ? H : Hkv, group = repeatKv ? H / Hkv : 1;
    QkvHeads out {Tensor::uninitialized({H, rows, d}), Tensor::uninitialized({shared, rows, d}),
        Tensor::uninitialized({shared, rows, d})};
    ConstMatrixMap x = qkv.matrix();
    for (int64_t h = 0; h < H; ++h)
        out.q.slice(h) = x.block(0, qkvColumn(c, 0, h), rows, d);
    for (int64_t h = 0; h < shared; ++h) {
        out.k.slice(h) = x.block(0, qkvColumn(c, 1, h / group), rows, d);
        out.v.slice(h) = x.block(0, qkvColumn(c, 2, h / group), rows, d);
    }
    return out;
}

QkvSplitFormulas splitFormulas(const ModelConfig &c)
{
    if (c.family == Family::GptNeoX)
        return {
            "Q_h = QKV[:, 3h·d : (3h+1)·d]", "K_h = QKV[:, (3h+1)·d : (3h+2)·d]", "V_h = QKV[:, (3h+2)·d : (3h+3)·d]"};
    const int64_t group = c.heads / c.kvHeadCount();
    if (c.fusesProjections()) { // Phi-3's qkv_proj: H query heads, then Hkv key heads, then Hkv value heads
        const std::string H = std::to_string(c.heads), Hkv = std::to_string(c.kvHeadCount());
        const std::string g = group == 1 ? "h" : "g",
                          which = group == 1 ? "" : ",  g = ⌊h / " + std::to_string(group) + "⌋";
        return {"Q_h = QKV[:, h·d : (h+1)·d]",
            "K_h = QKV[:, (" + H + "+" + g + ")·d : (" + H + "+" + g + "+1)·d]" + which,
            "V_h = QKV[:, (" + H + "+" + Hkv + "+" + g + ")·d : (" + H + "+" + Hkv + "+" + g + "+1)·d]" + which};
    }
    if (group == 1)
        return {"Q_h = Q[:, h·d : (h+1)·d]", "K_h = K[:, h·d : (h+1)·d]", "V_h = V[:, h·d : (h+1)·d]"};
    const std::string shared = "[:, g·d : (g+1)·d],  g = ⌊h / " + std::to_string(group) + "⌋: each of the "
        + std::to_string(c.kvHeadCount()) + " K/V heads serves " + std::to_string(group) + " query heads";
    return {"Q_h = Q[:, h·d : (h+1)·d]", "K_h = K" + shared, "V_h = V" + shared};
}

std::vector<Tensor> qkvGradients(const Tensor &dq, const Tensor &dk, const Tensor &dv, const ModelConfig &c)
{
    const std::vector<BlockPart> parts = qkvParts(c);
    const int64_t H = c.heads, Hkv = c.kvHeadCount(), d = c.headDim(), rows = dq.dim(1), group = H / Hkv;
    std::vector<Tensor> grads;
    if (parts.size() == 1)
        grads.emplace_back(Shape {rows, qkvWidth(c)});
    else
        grads = {Tensor({rows, H * d}), Tensor({rows, Hkv * d}), Tensor({rows, Hkv * d})};
    const int64_t starts[3] = {0, qkvColumn(c, 1, 0), qkvColumn(c, 2, 0)};
    const Tensor *heads[3] = {&dq, &dk, &dv};
    for (int which = 0; which < 3; ++which) {
        Tensor &g = grads[parts.size() == 1 ? 0 : size_t(which)];
        const int64_t offset = parts.size() == 1 ? 0 : starts[which];
        for (int64_t h = 0; h < H; ++h) {
            const int64_t source = which == 0 ? h : h / group;
            g.matrix().block(0, qkvColumn(c, which, source) - offset, rows, d) += heads[which]->slice(h);
        }
    }
    return grads;
}

namespace {

// The module holding head `head`'s columns for `which`, and where they begin in it.
std::pair<LinearModule, int64_t> headColumns(const ModelConfig &c, const BlockWeights &b, int which, int64_t head)
{
    const std::vector<BlockPart> parts = qkvParts(c);
    if (parts.size() == 1)
        return {blockModule(c, b, parts[0]), qkvColumn(c, which, head)};
    const BlockPart part = which == 0 ? BlockPart::Q : which == 1 ? BlockPart::K : BlockPart::V;
    return {blockModule(c, b, part), qkvColumn(c, which, head) - qkvColumn(c, which, 0)};
}

// Head `head`'s rows of an [out, in] weight, read in place.
ConstMatrixMap rowsOf(const Tensor &weight, int64_t first, int64_t count)
{
    return ConstMatrixMap(weight.data() + first * weight.dim(1), count, weight.dim(1));
}

} // namespace

void projectHead(Tensor &out, const Tensor &x, const ModelConfig &c, const BlockWeights &b, int which, int64_t head)
{
    const auto [m, column] = headColumns(c, b, which, head);
    const int64_t d = c.headDim();
    if (out.shape() != Shape {x.dim(0), d})
        throw Error("projectHead: expected the output [" + std::to_string(x.dim(0)) + ", " + std::to_string(d)
            + "], got " + out.shapeString());
    // y = x Wᵀ over the head's rows of W [out, in]
    matrixProduct(out.matrix(), x.matrix(), false, rowsOf(m.weight, m.firstRow + column, d), true, false);
    if (!m.bias.empty())
        out.matrix().rowwise() += ConstRowVectorMap(m.bias.data() + column, d);
}

void projectHeadBackward(
    Tensor &dx, const Tensor &dy, const ModelConfig &c, const BlockWeights &b, int which, int64_t head)
{
    const auto [m, column] = headColumns(c, b, which, head);
    const int64_t d = c.headDim();
    matrixProduct(dx.matrix(), dy.matrix(), false, rowsOf(m.weight, m.firstRow + column, d), false, true);
}

void headWrite(Tensor &out, ConstMatrixMap context, const ModelConfig &c, const BlockWeights &b, int64_t head)
{
    const LinearModule m = blockModule(c, b, BlockPart::Out);
    const int64_t d = c.headDim();
    // W_o [D, H·d]: the head's d columns, copied as their transpose [d, D]: O_h = C_h W_o[:, h·d : (h+1)·d]ᵀ
    const ConstMatrixMap w = m.ownRows();
    Tensor columns = Tensor::uninitialized({d, w.rows()});
    columns.matrix() = w.middleCols(head * d, d).transpose();
    matrixProduct(out.matrix(), context, false, ConstMatrixMap(columns.data(), d, w.rows()), false, false);
}

std::string outputFormula(const ModelConfig &c)
{
    if (c.storesConv1d())
        return "O = C W_proj + b_proj";
    return std::string("O = C W_oᵀ") + (c.outBias ? " + b_o" : "");
}

ops::RopeStyle ropeStyle(const ModelConfig &c)
{
    return c.positions == PositionKind::Rope ? ops::RopeStyle::Interleaved : ops::RopeStyle::RotateHalf;
}

float scoreScale(const ModelConfig &c)
{
    if (!c.scaleScores)
        return 1.0f;
    return float(1.0 / std::sqrt(c.queryScaleBase > 0 ? double(c.queryScaleBase) : double(c.headDim())));
}

} // namespace atlas
