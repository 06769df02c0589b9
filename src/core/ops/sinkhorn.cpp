#include "ops/sinkhorn.h"

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace atlas::ops {

namespace {

using Square = Eigen::MatrixXd;

// Z − lse of each row (rows true) or column: the log-domain normalisation of one half-iteration.
Square normalised(const Square &z, bool rows)
{
    Square out = z;
    const auto lse = [](const auto &v) {
        const double m = v.maxCoeff();
        return m + std::log((v.array() - m).exp().sum());
    };
    if (rows)
        for (int64_t i = 0; i < z.rows(); ++i)
            out.row(i).array() -= lse(z.row(i));
    else
        for (int64_t j = 0; j < z.cols(); ++j)
            out.col(j).array() -= lse(z.col(j));
    return out;
}

// Z_0 and the matrix before every half-iteration, Z_0 first: 2k + 1 of them, the last the final Z.
std::vector<Square> iterates(const Tensor &logits, const Tensor *noise, int iterations, float temperature)
{
    Square z = logits.matrix().cast<double>();
    if (noise)
        z += noise->matrix().cast<double>();
    z /= double(temperature);
    std::vector<Square> out = {z};
    for (int k = 0; k < iterations; ++k) {
        out.push_back(normalised(out.back(), true));
        out.push_back(normalised(out.back(), false));
    }
    return out;
}

} // namespace

void block_sum_forward(Tensor &out, const Tensor &x, int block)
{
    MatrixMap o = out.matrix();
    ConstMatrixMap in = x.matrix();
    o.setZero();
    for (int64_t t = 0; t < in.rows(); ++t)
        o.row(t / block) += in.row(t);
}

void block_sum_backward(Tensor &dx, const Tensor &dout, int block)
{
    MatrixMap d = dx.matrix();
    ConstMatrixMap g = dout.matrix();
    for (int64_t t = 0; t < d.rows(); ++t)
        d.row(t) += g.row(t / block);
}

void gumbel_noise(Tensor &g, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(std::numeric_limits<double>::min(), 1.0);
    for (float &v : g.values())
        v = float(-std::log(-std::log(uniform(rng))));
}

void sinkhorn_forward(Tensor &S, const Tensor &logits, const Tensor *noise, int iterations, float temperature)
{
    S.matrix() = iterates(logits, noise, iterations, temperature).back().array().exp().matrix().cast<float>();
}

void sinkhorn_backward(
    Tensor &dlogits, const Tensor &dS, const Tensor &logits, const Tensor *noise, int iterations, float temperature)
{
    const std::vector<Square> z = iterates(logits, noise, iterations, temperature);
    // S = exp(Z): dZ = dS ⊙ S. Y = X − lse(X) along a row (column): dX = dY − softmax(X) Σ dY along it.
    Square dz = dS.matrix().cast<double>().cwiseProduct(z.back().array().exp().matrix());
    for (size_t step = z.size() - 1; step > 0; --step) {
        const Square &x = z[step - 1];
        const bool rows = step % 2 == 1;
        const Square soft = (x - normalised(x, rows)).eval(); // lse, broadcast
        const Square p = (x - soft).array().exp().matrix(); // softmax along the direction
        if (rows)
            dz -= (p.array().colwise() * dz.rowwise().sum().array()).matrix();
        else
            dz -= (p.array().rowwise() * dz.colwise().sum().array()).matrix();
    }
    dlogits.matrix() = (dz / double(temperature)).cast<float>();
}

void sinkhorn_attention_forward(Tensor &blockProbs, Tensor &probs, const Tensor &scores, const Tensor &S, int block)
{
    const int64_t H = scores.dim(0), T = scores.dim(1), N = S.dim(0), b = block;
    ConstMatrixMap s = S.matrix();
    std::vector<double> z(size_t(2 * b));
    for (int64_t h = 0; h < H; ++h) {
        ConstMatrixMap sc = scores.slice(h);
        MatrixMap bp = blockProbs.slice(h), pr = probs.slice(h);
        pr.setZero();
        for (int64_t t = 0; t < T; ++t) {
            const int64_t I = t / b;
            double top = -std::numeric_limits<double>::infinity();
            for (int64_t r = 0; r < b; ++r) {
                double u = 0;
                for (int64_t J = 0; J < N; ++J)
                    if (J * b + r < T)
                        u += double(s(I, J)) * sc(t, J * b + r);
                z[size_t(r)] = u;
                z[size_t(b + r)] = I * b + r < T ? double(sc(t, I * b + r)) : -std::numeric_limits<double>::infinity();
                top = std::max({top, z[size_t(r)], z[size_t(b + r)]});
            }
            double sum = 0;
            for (double &v : z)
                sum += (v = std::exp(v - top));
            for (int64_t r = 0; r < b; ++r) {
                const double a = z[size_t(r)] / sum, c = z[size_t(b + r)] / sum;
                bp(t, r) = float(a);
                bp(t, b + r) = float(c);
                for (int64_t J = 0; J < N; ++J)
                    if (J * b + r < T)
                        pr(t, J * b + r) += float(a * s(I, J) + (J == I ? c : 0.0));
            }
        }
    }
}

void sinkhorn_attention_backward(Tensor &dscores, Tensor &dS, const Tensor &dprobs, const Tensor &blockProbs,
    const Tensor &scores, const Tensor &S, int block)
{
    const int64_t H = scores.dim(0), T = scores.dim(1), N = S.dim(0), b = block;
    ConstMatrixMap s = S.matrix();
    Square ds = Square::Zero(N, N); // summed over every head and query: in double, as the terms cancel
    std::vector<double> g(size_t(2 * b));
    for (int64_t h = 0; h < H; ++h) {
        ConstMatrixMap sc = scores.slice(h), bp = blockProbs.slice(h), dp = dprobs.slice(h);
        MatrixMap dsc = dscores.slice(h);
        for (int64_t t = 0; t < T; ++t) {
            const int64_t I = t / b;
            // probs(t, Jb + r) = aᵣ S_IJ + [J = I] cᵣ
            double dot = 0;
            for (int64_t r = 0; r < b; ++r) {
                double da = 0;
                for (int64_t J = 0; J < N; ++J)
                    if (J * b + r < T) {
                        da += double(s(I, J)) * dp(t, J * b + r);
                        ds(I, J) += double(bp(t, r)) * dp(t, J * b + r);
                    }
                g[size_t(r)] = da;
                g[size_t(b + r)] = I * b + r < T ? double(dp(t, I * b + r)) : 0.0;
                dot += bp(t, r) * g[size_t(r)] + bp(t, b + r) * g[size_t(b + r)];
            }
            // softmax over the 2b slots, then uᵣ = Σ_J S_IJ scores(t, Jb + r) and wᵣ = scores(t, Ib + r)
            for (int64_t r = 0; r < b; ++r) {
                const double du = bp(t, r) * (g[size_t(r)] - dot), dw = bp(t, b + r) * (g[size_t(b + r)] - dot);
                for (int64_t J = 0; J < N; ++J)
                    if (J * b + r < T) {
                        dsc(t, J * b + r) += float(double(s(I, J)) * du + (J == I ? dw : 0.0));
                        ds(I, J) += du * sc(t, J * b + r);
                    }
            }
        }
    }
    dS.matrix() += ds.cast<float>();
}

} // namespace atlas::ops
