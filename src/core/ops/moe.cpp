#include "ops/ops.h"
#include "ops/shapecheck.h"

#include <algorithm>
#include <cmath>
#include <numeric>

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

// One expert on its rows: up = x W_fc + b_fc, act = act(up), y = act W_proj + b_proj.
struct ExpertPass
{
    Tensor x, up, act, y;
    ExpertPass(const Tensor &input, const std::vector<int64_t> &tokens, const FfnWeights &w)
        : x(gatherRows(input, tokens))
        , up({x.dim(0), w.fcWeight.dim(1)})
        , act(up.shape())
        , y({x.dim(0), w.projWeight.dim(1)})
    {
        linear_forward(up, x, w.fcWeight, w.fcBias);
        activation_forward(act, up, w.activation);
        linear_forward(y, act, w.projWeight, w.projBias);
    }
};

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
        const GatedExpertWeights &w = experts[e];
        const Tensor xe = gatherRows(x, rows[e].tokens);
        const int64_t n = xe.dim(0), F = w.gate.dim(0);
        Tensor g({n, F}), u({n, F}), a({n, F}), y({n, D});
        linear_t_forward(g, xe, w.gate, Tensor());
        linear_t_forward(u, xe, w.up, Tensor());
        gated_activation_forward(a, g, u, w.activation);
        linear_t_forward(y, a, w.down, Tensor());
        MatrixMap o = out.matrix();
        const ConstMatrixMap gates = gate.matrix();
        for (int64_t k = 0; k < n; ++k)
            o.row(rows[e].tokens[size_t(k)])
                += gates(rows[e].tokens[size_t(k)], rows[e].ranks[size_t(k)]) * y.matrix().row(k);
    }
}

void moe_backward(Tensor &dx, Tensor &dgate, const std::vector<FfnGradients> &g, const Tensor &dout, const Tensor &x,
    const Tensor &choice, const Tensor &gate, const std::vector<FfnWeights> &experts)
{
    requireShape(dx, x.shape(), "mixture of experts backward dx");
    requireShape(dout, x.shape(), "mixture of experts backward dout");
    requireShape(dgate, gate.shape(), "mixture of experts backward dgate");
    const std::vector<ExpertRows> rows = rowsByExpert(choice, int(experts.size()));
    for (size_t e = 0; e < experts.size(); ++e) {
        const std::vector<int64_t> &tokens = rows[e].tokens;
        if (tokens.empty())
            continue;
        const ExpertPass pass(x, tokens, experts[e]); // recomputed: the trace keeps no per-expert activations
        const int64_t n = int64_t(tokens.size());
        Tensor dy({n, x.dim(1)});
        MatrixMap dg = dgate.matrix(), dyRows = dy.matrix();
        const ConstMatrixMap gates = gate.matrix(), d = dout.matrix();
        for (int64_t k = 0; k < n; ++k) {
            const int64_t t = tokens[size_t(k)], r = rows[e].ranks[size_t(k)];
            // out_t = Σ gate · y: dgate = dout_t · y, dy = gate · dout_t
            dg(t, r) += d.row(t).dot(pass.y.matrix().row(k));
            dyRows.row(k) = gates(t, r) * d.row(t);
        }
        Tensor dact(pass.act.shape()), dup(pass.up.shape()), dxRows(pass.x.shape());
        linear_backward(dact, g[e].projWeight, g[e].projBias, dy, pass.act, experts[e].projWeight);
        activation_backward(dup, dact, pass.up, experts[e].activation);
        linear_backward(dxRows, g[e].fcWeight, g[e].fcBias, dup, pass.x, experts[e].fcWeight);
        for (int64_t k = 0; k < n; ++k)
            dx.matrix().row(tokens[size_t(k)]) += dxRows.matrix().row(k);
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

} // namespace atlas::ops
