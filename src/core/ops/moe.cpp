#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "tensor/packedrows.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace atlas::ops {

namespace {

// The tokens a choice sent to expert e, in sequence order, with the rank of that choice.
struct ExpertRows
{
    std::vector<int64_t> tokens;
    std::vector<int64_t> ranks;
};

std::vector<ExpertRows> rowsByExpert(const Tensor &choice, int experts)
{
    std::vector<ExpertRows> rows(static_cast<size_t>(experts));
    const int64_t T = choice.dim(0), K = choice.dim(1);
    const ConstMatrixMap c = choice.matrix();
    for (int64_t t = 0; t < T; ++t)
        for (int64_t r = 0; r < K; ++r) {
            const int e = int(c(t, r));
            if (e < 0)
                continue;
            if (e >= experts)
                throw Error("mixture of experts: token " + std::to_string(t) + " is routed to expert "
                    + std::to_string(e) + " of " + std::to_string(experts));
            rows[size_t(e)].tokens.push_back(t);
            rows[size_t(e)].ranks.push_back(r);
        }
    return rows;
}

Tensor gatherRows(const Tensor &x, const std::vector<int64_t> &tokens)
{
    Tensor rows({int64_t(tokens.size()), x.dim(1)});
    for (size_t n = 0; n < tokens.size(); ++n)
        rows.matrix().row(int64_t(n)) = x.matrix().row(tokens[n]);
    return rows;
}

// One expert on its rows: up = x W_fcᵀ + b_fc, act = act(up), y = act W_projᵀ + b_proj.
struct ExpertPass
{
    Tensor x, up, act, y;
    ExpertPass(const Tensor &input, const std::vector<int64_t> &tokens, const FfnWeights &w)
        : x(gatherRows(input, tokens))
        , up({x.dim(0), w.fcWeight.dim(0)})
        , act(up.shape())
        , y({x.dim(0), w.projWeight.dim(0)})
    {
        linear_forward(up, x, w.fcWeight, w.fcBias);
        activation_forward(act, up, w.activation);
        linear_forward(y, act, w.projWeight, w.projBias);
    }
};

// One gated expert on its rows: gate = x W1ᵀ, up = x W3ᵀ, act = act(gate) ⊙ up, y = act W2ᵀ.
struct GatedExpertPass
{
    Tensor x, gate, up, act, y;
    GatedExpertPass(const Tensor &input, const std::vector<int64_t> &tokens, const GatedExpertWeights &w)
        : x(gatherRows(input, tokens))
        , gate({x.dim(0), w.gate.dim(0)})
        , up(gate.shape())
        , act(gate.shape())
        , y({x.dim(0), w.down.dim(0)})
    {
        linear_forward(gate, x, w.gate, Tensor());
        linear_forward(up, x, w.up, Tensor());
        gated_activation_forward(act, gate, up, w.activation);
        linear_forward(y, act, w.down, Tensor());
    }
};

// out_t += Σ gate · y over expert e's rows; dgate += dout_t · y and returns dy = gate · dout_t, row by row.
Tensor gatedOutputBackward(
    Tensor &dgate, const ExpertRows &rows, const Tensor &y, const Tensor &dout, const Tensor &gate)
{
    Tensor dy(y.shape());
    MatrixMap dg = dgate.matrix(), dyRows = dy.matrix();
    const ConstMatrixMap gates = gate.matrix(), d = dout.matrix();
    for (size_t k = 0; k < rows.tokens.size(); ++k) {
        const int64_t t = rows.tokens[k], r = rows.ranks[k];
        dg(t, r) += d.row(t).dot(y.matrix().row(int64_t(k)));
        dyRows.row(int64_t(k)) = gates(t, r) * d.row(t);
    }
    return dy;
}

// gpt-oss's expert e on its rows, from the stacked tensors: [g u] = x gateUp_e + b (gate in the even columns, up in
// the odd), act = act(min(g, l)) ⊙ (clamp(u, −l, l) + 1), y = act down_e + b_e.
struct StackedExpertPass
{
    Tensor x, gate, up, act, y;
    StackedExpertPass(const Tensor &input, const std::vector<int64_t> &tokens, const StackedExperts &w, int64_t e)
        : x(gatherRows(input, tokens))
    {
        const int64_t D = w.down.dim(2), F = w.down.dim(1), n = x.dim(0);
        // Packed stacks (an MXFP4 checkpoint's, or a GGUF file's) hold each expert's Wᵀ as rows, read a tile at a time.
        const PackedRows *packedGateUp = w.gateUp.packing(), *packedDown = w.down.packing();
        MatrixRM gateUp(n, 2 * F);
        if (packedGateUp)
            packedWeightProduct(MatrixMap(gateUp.data(), n, 2 * F), std::as_const(x).matrix(),
                *packedGateUp->rowRange(e * 2 * F, 2 * F));
        else
            gateUp.noalias() = x.matrix() * ConstMatrixMap(w.gateUp.data() + e * D * 2 * F, D, 2 * F);
        gateUp.rowwise() += ConstRowVectorMap(w.gateUpBias.data() + e * 2 * F, 2 * F);
        gate = Tensor::uninitialized({n, F});
        up = Tensor::uninitialized({n, F});
        for (int64_t r = 0; r < n; ++r)
            for (int64_t f = 0; f < F; ++f) {
                gate.matrix()(r, f) = gateUp(r, 2 * f);
                up.matrix()(r, f) = gateUp(r, 2 * f + 1);
            }
        act = Tensor::uninitialized({n, F});
        gated_activation_forward(act, gate, up, w.activation, w.clamp);
        y = Tensor::uninitialized({n, D});
        if (packedDown)
            packedWeightProduct(y.matrix(), std::as_const(act).matrix(), *packedDown->rowRange(e * D, D));
        else
            y.matrix().noalias() = act.matrix() * ConstMatrixMap(w.down.data() + e * F * D, F, D);
        y.matrix().rowwise() += ConstRowVectorMap(w.downBias.data() + e * D, D);
    }
};

void requireBackwardShapes(
    const Tensor &dx, const Tensor &dgate, const Tensor &dout, const Tensor &x, const Tensor &gate)
{
    requireShape(dx, x.shape(), "mixture of experts backward dx");
    requireShape(dout, x.shape(), "mixture of experts backward dout");
    requireShape(dgate, gate.shape(), "mixture of experts backward dgate");
}

void scatterAddRows(Tensor &dx, const std::vector<int64_t> &tokens, const Tensor &rows)
{
    for (size_t k = 0; k < tokens.size(); ++k)
        dx.matrix().row(tokens[k]) += rows.matrix().row(int64_t(k));
}

} // namespace

int64_t expert_capacity(double factor, int64_t tokens, int experts)
{
    // The tiny slack keeps an exact product (1.25 · 16 / 4 = 5) from rounding up past itself in floating point.
    const double exact = factor * double(tokens) / double(std::max(experts, 1));
    return std::max<int64_t>(1, int64_t(std::ceil(exact - 1e-9)));
}

void router_route(Tensor &choice, Tensor &gate, const Tensor &probs, int64_t capacity)
{
    const int64_t T = probs.dim(0), E = probs.dim(1), K = choice.dim(1);
    requireShape(choice, {T, K}, "router choice");
    requireShape(gate, {T, K}, "router gate");
    if (K < 1 || K > E)
        throw Error("router: top-" + std::to_string(K) + " of " + std::to_string(E) + " experts");
    const ConstMatrixMap p = probs.matrix();
    MatrixMap c = choice.matrix(), g = gate.matrix();
    const std::vector<int> ranked = router_ranking(probs, K);
    // Buffers fill rank by rank (every token's first choice before any second choice), each rank in sequence
    // order: a token whose expert is already full is dropped from it.
    std::vector<int64_t> load(size_t(E), 0);
    for (int64_t r = 0; r < K; ++r)
        for (int64_t t = 0; t < T; ++t) {
            const int e = ranked[size_t(t * K + r)];
            const bool kept = load[size_t(e)] < capacity;
            load[size_t(e)] += kept;
            c(t, r) = kept ? float(e) : -1.0f;
            g(t, r) = kept ? p(t, e) : 0.0f;
        }
}

std::vector<int> router_ranking(const Tensor &probs, int64_t K)
{
    const int64_t T = probs.dim(0), E = probs.dim(1);
    const ConstMatrixMap p = probs.matrix();
    std::vector<int> ranked(size_t(T * K));
    std::vector<int> order(static_cast<size_t>(E));
    for (int64_t t = 0; t < T; ++t) {
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p(t, a) > p(t, b); });
        std::copy(order.begin(), order.begin() + K, ranked.begin() + t * K);
    }
    return ranked;
}

std::vector<float> router_mean_probs(const Tensor &probs)
{
    std::vector<float> mean(size_t(probs.dim(1)));
    for (int64_t e = 0; e < probs.dim(1); ++e)
        mean[size_t(e)] = float(probs.matrix().col(e).cast<double>().sum() / double(probs.dim(0)));
    return mean;
}

std::vector<float> router_top1_fractions(const Tensor &probs)
{
    const int64_t T = probs.dim(0), E = probs.dim(1);
    std::vector<float> f(size_t(E), 0.0f);
    for (int64_t t = 0; t < T; ++t) {
        Eigen::Index best = 0;
        probs.matrix().row(t).maxCoeff(&best); // the first maximum: the lower index on a tie, as router_route
        f[size_t(best)] += 1.0f / float(T);
    }
    return f;
}

float router_aux_loss(const Tensor &probs)
{
    const int64_t E = probs.dim(1);
    const std::vector<float> f = router_top1_fractions(probs), meanProb = router_mean_probs(probs);
    double loss = 0;
    for (int64_t e = 0; e < E; ++e)
        loss += double(f[size_t(e)]) * double(meanProb[size_t(e)]);
    return float(double(E) * loss);
}

void router_aux_loss_backward(Tensor &dprobs, const Tensor &probs, float coef)
{
    requireShape(dprobs, probs.shape(), "router aux loss backward dprobs");
    const int64_t T = probs.dim(0), E = probs.dim(1);
    const std::vector<float> f = router_top1_fractions(probs);
    MatrixMap d = dprobs.matrix();
    for (int64_t t = 0; t < T; ++t)
        for (int64_t e = 0; e < E; ++e)
            d(t, e) += coef * float(E) * f[size_t(e)] / float(T);
}

namespace {

// z_t = log Σᵢ exp(logits_ti), computed stably.
double logSumExp(const Tensor &logits, int64_t t)
{
    const auto row = logits.matrix().row(t).cast<double>();
    const double top = row.maxCoeff();
    return top + std::log((row.array() - top).exp().sum());
}

} // namespace

float router_z_loss(const Tensor &logits)
{
    const int64_t T = logits.dim(0);
    double sum = 0;
    for (int64_t t = 0; t < T; ++t) {
        const double z = logSumExp(logits, t);
        sum += z * z;
    }
    return float(sum / double(T));
}

void router_z_loss_backward(Tensor &dlogits, const Tensor &logits, const Tensor &probs, float coef)
{
    requireShape(dlogits, logits.shape(), "router z-loss backward dlogits");
    requireShape(probs, logits.shape(), "router z-loss backward probs");
    const int64_t T = logits.dim(0);
    MatrixMap d = dlogits.matrix();
    for (int64_t t = 0; t < T; ++t) { // ∂z_t²/∂l_t = 2 z_t · softmax(l_t)
        const float z = float(logSumExp(logits, t));
        d.row(t) += (coef * 2.0f * z / float(T)) * probs.matrix().row(t);
    }
}

void moe_forward(
    Tensor &out, const Tensor &x, const Tensor &choice, const Tensor &gate, const std::vector<FfnWeights> &experts)
{
    const int64_t T = x.dim(0);
    requireShape(gate, choice.shape(), "mixture of experts gate");
    requireShape(out, {T, x.dim(1)}, "mixture of experts output");
    std::fill(out.data(), out.data() + out.numel(), 0.0f);
    const std::vector<ExpertRows> rows = rowsByExpert(choice, int(experts.size()));
    for (size_t e = 0; e < experts.size(); ++e) {
        if (rows[e].tokens.empty())
            continue;
        const ExpertPass pass(x, rows[e].tokens, experts[e]);
        MatrixMap o = out.matrix();
        const ConstMatrixMap g = gate.matrix();
        for (size_t n = 0; n < rows[e].tokens.size(); ++n) {
            const int64_t t = rows[e].tokens[n];
            o.row(t) += g(t, rows[e].ranks[n]) * pass.y.matrix().row(int64_t(n));
        }
    }
}

void moe_gated_forward(Tensor &out, const Tensor &x, const Tensor &choice, const Tensor &gate,
    const std::vector<GatedExpertWeights> &experts)
{
    const int64_t T = x.dim(0), D = x.dim(1);
    requireShape(gate, choice.shape(), "mixture of experts gate");
    requireShape(out, {T, D}, "mixture of experts output");
    std::fill(out.data(), out.data() + out.numel(), 0.0f);
    const std::vector<ExpertRows> rows = rowsByExpert(choice, int(experts.size()));
    for (size_t e = 0; e < experts.size(); ++e) {
        if (rows[e].tokens.empty())
            continue;
        const GatedExpertPass pass(x, rows[e].tokens, experts[e]);
        MatrixMap o = out.matrix();
        const ConstMatrixMap gates = gate.matrix();
        for (size_t k = 0; k < rows[e].tokens.size(); ++k)
            o.row(rows[e].tokens[k]) += gates(rows[e].tokens[k], rows[e].ranks[k]) * pass.y.matrix().row(int64_t(k));
    }
}

void moe_backward(Tensor &dx, Tensor &dgate, const std::vector<FfnGradients> &g, const Tensor &dout, const Tensor &x,
    const Tensor &choice, const Tensor &gate, const std::vector<FfnWeights> &experts)
{
    requireBackwardShapes(dx, dgate, dout, x, gate);
    const std::vector<ExpertRows> rows = rowsByExpert(choice, int(experts.size()));
    for (size_t e = 0; e < experts.size(); ++e) {
        if (rows[e].tokens.empty())
            continue;
        const ExpertPass pass(x, rows[e].tokens, experts[e]); // recomputed: the trace keeps no per-expert activations
        const Tensor dy = gatedOutputBackward(dgate, rows[e], pass.y, dout, gate);
        Tensor dact(pass.act.shape()), dup(pass.up.shape()), dxRows(pass.x.shape());
        linear_backward(dact, g[e].projWeight, &g[e].projBias, dy, pass.act, experts[e].projWeight);
        activation_backward(dup, dact, pass.up, experts[e].activation);
        linear_backward(dxRows, g[e].fcWeight, &g[e].fcBias, dup, pass.x, experts[e].fcWeight);
        scatterAddRows(dx, rows[e].tokens, dxRows);
    }
}

void moe_gated_backward(Tensor &dx, Tensor &dgate, const std::vector<GatedExpertGradients> &g, const Tensor &dout,
    const Tensor &x, const Tensor &choice, const Tensor &gate, const std::vector<GatedExpertWeights> &experts)
{
    requireBackwardShapes(dx, dgate, dout, x, gate);
    const std::vector<ExpertRows> rows = rowsByExpert(choice, int(experts.size()));
    for (size_t e = 0; e < experts.size(); ++e) {
        if (rows[e].tokens.empty())
            continue;
        const GatedExpertWeights &w = experts[e];
        const GatedExpertPass pass(x, rows[e].tokens, w);
        const Tensor dy = gatedOutputBackward(dgate, rows[e], pass.y, dout, gate);
        Tensor dact(pass.act.shape()), dg(pass.gate.shape()), du(pass.up.shape()), dxRows(pass.x.shape());
        linear_backward(dact, g[e].down, nullptr, dy, pass.act, w.down);
        gated_activation_backward(dg, du, dact, pass.gate, pass.up, w.activation);
        linear_backward(dxRows, g[e].gate, nullptr, dg, pass.x, w.gate);
        linear_backward(dxRows, g[e].up, nullptr, du, pass.x, w.up);
        scatterAddRows(dx, rows[e].tokens, dxRows);
    }
}

void router_renormalised_gate_backward(Tensor &dgate, const Tensor &gate, const Tensor &choice, const Tensor &probs)
{
    requireShape(dgate, choice.shape(), "renormalised gate backward dgate");
    MatrixMap d = dgate.matrix();
    const ConstMatrixMap g = gate.matrix(), c = choice.matrix(), p = probs.matrix();
    for (int64_t t = 0; t < choice.dim(0); ++t) {
        float sum = 0.0f; // S = Σ_k p_k over the chosen experts, g_r = p_r / S
        for (int64_t r = 0; r < choice.dim(1); ++r)
            if (c(t, r) < 0)
                throw Error("renormalised gate backward: token " + std::to_string(t)
                    + " was dropped; renormalised routing is dropless");
            else
                sum += p(t, int64_t(c(t, r)));
        const float carried = d.row(t).dot(g.row(t)); // Σ_k dg_k g_k
        for (int64_t r = 0; r < choice.dim(1); ++r)
            d(t, r) = (d(t, r) - carried) / sum; // ∂g_k/∂p_r = (δ_kr − g_k) / S
    }
}

void router_gate_backward(Tensor &dprobs, const Tensor &dgate, const Tensor &choice)
{
    requireShape(dgate, choice.shape(), "router gate backward dgate");
    const ConstMatrixMap c = choice.matrix(), g = dgate.matrix();
    MatrixMap d = dprobs.matrix();
    for (int64_t t = 0; t < choice.dim(0); ++t)
        for (int64_t r = 0; r < choice.dim(1); ++r)
            if (const int e = int(c(t, r)); e >= 0)
                d(t, e) += g(t, r);
}

void moe_stacked_forward(
    Tensor &out, const Tensor &x, const Tensor &choice, const Tensor &gate, const StackedExperts &experts)
{
    const int64_t T = x.dim(0), D = x.dim(1), E = experts.gateUp.dim(0), F = experts.down.dim(1);
    requireShape(gate, choice.shape(), "mixture of experts gate");
    requireShape(out, {T, D}, "mixture of experts output");
    requireShape(experts.gateUp, {E, D, 2 * F}, "stacked experts gate_up_proj");
    requireShape(experts.gateUpBias, {E, 2 * F}, "stacked experts gate_up_proj_bias");
    requireShape(experts.down, {E, F, D}, "stacked experts down_proj");
    requireShape(experts.downBias, {E, D}, "stacked experts down_proj_bias");
    std::fill(out.data(), out.data() + out.numel(), 0.0f);
    const std::vector<ExpertRows> rows = rowsByExpert(choice, int(E));
    for (int64_t e = 0; e < E; ++e) {
        if (rows[size_t(e)].tokens.empty())
            continue;
        const StackedExpertPass pass(x, rows[size_t(e)].tokens, experts, e);
        const ConstMatrixMap gates = gate.matrix();
        for (size_t k = 0; k < rows[size_t(e)].tokens.size(); ++k) {
            const int64_t t = rows[size_t(e)].tokens[k];
            out.matrix().row(t) += gates(t, rows[size_t(e)].ranks[k]) * pass.y.matrix().row(int64_t(k));
        }
    }
}

void moe_stacked_backward(Tensor &dx, Tensor &dgate, const StackedExpertGradients &g, const Tensor &dout,
    const Tensor &x, const Tensor &choice, const Tensor &gate, const StackedExperts &experts)
{
    requireBackwardShapes(dx, dgate, dout, x, gate);
    const int64_t D = x.dim(1), E = experts.gateUp.dim(0), F = experts.down.dim(1);
    const std::vector<ExpertRows> rows = rowsByExpert(choice, int(E));
    for (int64_t e = 0; e < E; ++e) {
        if (rows[size_t(e)].tokens.empty())
            continue;
        const StackedExpertPass pass(x, rows[size_t(e)].tokens, experts, e);
        const Tensor dy = gatedOutputBackward(dgate, rows[size_t(e)], pass.y, dout, gate);
        const int64_t n = pass.x.dim(0);
        // y = act down_e + b_e
        MatrixMap(g.down.data() + e * F * D, F, D).noalias() += pass.act.matrix().transpose() * dy.matrix();
        RowVectorMap(g.downBias.data() + e * D, D) += dy.matrix().colwise().sum();
        Tensor dact({n, F}), dg({n, F}), du({n, F});
        dact.matrix().noalias() = dy.matrix() * ConstMatrixMap(experts.down.data() + e * F * D, F, D).transpose();
        gated_activation_backward(dg, du, dact, pass.gate, pass.up, experts.activation, experts.clamp);
        MatrixRM dgateUp(n, 2 * F);
        for (int64_t r = 0; r < n; ++r)
            for (int64_t f = 0; f < F; ++f) {
                dgateUp(r, 2 * f) = dg.matrix()(r, f);
                dgateUp(r, 2 * f + 1) = du.matrix()(r, f);
            }
        MatrixMap(g.gateUp.data() + e * D * 2 * F, D, 2 * F).noalias() += pass.x.matrix().transpose() * dgateUp;
        RowVectorMap(g.gateUpBias.data() + e * 2 * F, 2 * F) += dgateUp.colwise().sum();
        const MatrixRM dxRows = dgateUp * ConstMatrixMap(experts.gateUp.data() + e * D * 2 * F, D, 2 * F).transpose();
        for (size_t k = 0; k < rows[size_t(e)].tokens.size(); ++k)
            dx.matrix().row(rows[size_t(e)].tokens[k]) += dxRows.row(int64_t(k));
    }
}

} // namespace atlas::ops
