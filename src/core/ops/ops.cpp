#include "ops/ops.h"

#include "util/error.h"
#include "util/parallel.h"

#include <cmath>
#include <limits>

namespace atlas::ops {

namespace {

void requireShape(const Tensor &t, const Shape &shape, const char *what)
{
    if (t.shape() != shape)
        throw Error(std::string(what) + ": expected shape " + Tensor::shapeString(shape) + ", got " + t.shapeString());
}

} // namespace

void embedding_forward(Tensor &out, const Tensor &wte, const std::vector<int> &tokens)
{
    const int64_t V = wte.dim(0), D = wte.dim(1);
    requireShape(out, {static_cast<int64_t>(tokens.size()), D}, "embedding output");
    for (size_t t = 0; t < tokens.size(); ++t) {
        if (tokens[t] < 0 || tokens[t] >= V)
            throw Error("token id " + std::to_string(tokens[t]) + " at position " + std::to_string(t)
                        + " is outside the vocabulary [0, " + std::to_string(V) + ")");
        out.matrix().row(static_cast<Eigen::Index>(t)) = wte.matrix().row(tokens[t]);
    }
}

void positions_learned_forward(Tensor &out, const Tensor &wpe)
{
    const int64_t T = out.dim(0);
    if (T > wpe.dim(0))
        throw Error("sequence of " + std::to_string(T) + " tokens is longer than the context of "
                    + std::to_string(wpe.dim(0)));
    out.matrix() = wpe.matrix().topRows(T);
}

void positions_sinusoidal_forward(Tensor &out)
{
    const int64_t T = out.dim(0), D = out.dim(1);
    MatrixMap o = out.matrix();
    for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < D; i += 2) {
            const double angle = double(t) / std::pow(10000.0, double(i) / double(D));
            o(t, i) = static_cast<float>(std::sin(angle));
            if (i + 1 < D)
                o(t, i + 1) = static_cast<float>(std::cos(angle));
        }
}

void add_forward(Tensor &out, const Tensor &a, const Tensor &b)
{
    requireShape(b, a.shape(), "residual add");
    requireShape(out, a.shape(), "residual add output");
    Eigen::Map<Eigen::ArrayXf>(out.data(), out.numel())
        = Eigen::Map<const Eigen::ArrayXf>(a.data(), a.numel()) + Eigen::Map<const Eigen::ArrayXf>(b.data(), b.numel());
}

void layernorm_forward(Tensor &out, const Tensor &inp, const Tensor &weight, const Tensor &bias, float eps)
{
    const int64_t T = inp.dim(0), D = inp.dim(1);
    requireShape(out, inp.shape(), "layernorm output");
    ConstRowVectorMap w(weight.data(), D), b(bias.data(), D);
    ConstMatrixMap x = inp.matrix();
    MatrixMap o = out.matrix();
    parallelFor(T, 65536 / std::max<int64_t>(D, 1), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const float mean = x.row(t).mean();
            const float var = (x.row(t).array() - mean).square().mean();
            const float rstd = 1.0f / std::sqrt(var + eps);
            o.row(t) = ((x.row(t).array() - mean) * rstd * w.array() + b.array()).matrix();
        }
    });
}

void linear_forward(Tensor &out, const Tensor &inp, const Tensor &weight, const Tensor &bias)
{
    requireShape(out, {inp.dim(0), weight.dim(1)}, "linear output");
    if (inp.dim(1) != weight.dim(0))
        throw Error("linear: input width " + std::to_string(inp.dim(1)) + " does not match weight " + weight.shapeString());
    MatrixMap o = out.matrix();
    o.noalias() = inp.matrix() * weight.matrix();
    o.rowwise() += ConstRowVectorMap(bias.data(), bias.numel());
}

void split_heads_forward(Tensor &q, Tensor &k, Tensor &v, const Tensor &qkv, int heads)
{
    const int64_t T = qkv.dim(0), D = qkv.dim(1) / 3, d = D / heads;
    ConstMatrixMap x = qkv.matrix();
    Tensor *parts[3] = {&q, &k, &v};
    for (int p = 0; p < 3; ++p)
        for (int h = 0; h < heads; ++h)
            parts[p]->slice(h) = x.block(0, p * D + h * d, T, d);
}

void attention_scores_forward(Tensor &out, const Tensor &q, const Tensor &k, float scale)
{
    // The scale rides on the product (GEMM's alpha) instead of a second pass over the T x T result.
    for (int64_t h = 0; h < q.dim(0); ++h)
        out.slice(h).noalias() = (scale * q.slice(h)) * k.slice(h).transpose();
}

void attention_mask_forward(Tensor &out, const Tensor &scores, bool causal, const std::vector<int> &padding)
{
    const int64_t H = scores.dim(0), T = scores.dim(1);
    std::vector<unsigned char> keyOk(static_cast<size_t>(T), 1);
    for (int p : padding)
        keyOk.at(static_cast<size_t>(p)) = 0;
    const float ninf = -std::numeric_limits<float>::infinity();
    parallelFor(H * T, 1 << 14, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t i = r % T, allowedEnd = causal ? i + 1 : T;
            const float *s = scores.data() + r * T;
            float *o = out.data() + r * T;
            for (int64_t j = 0; j < T; ++j)
                o[j] = (j < allowedEnd && keyOk[static_cast<size_t>(j)]) ? s[j] : ninf;
        }
    });
}

void softmax_forward(Tensor &out, const Tensor &inp)
{
    const int64_t N = inp.shape().back(), rows = inp.numel() / N;
    parallelFor(rows, 65536 / std::max<int64_t>(N, 1), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            Eigen::Map<const Eigen::ArrayXf> x(inp.data() + r * N, N);
            Eigen::Map<Eigen::ArrayXf> y(out.data() + r * N, N);
            const float m = x.maxCoeff();
            if (m == -std::numeric_limits<float>::infinity()) {
                y.setZero(); // no key may be attended: the row carries no weight at all
                continue;
            }
            y = (x - m).exp();
            y /= y.sum();
        }
    });
}

void attention_context_forward(Tensor &out, const Tensor &probs, const Tensor &v)
{
    for (int64_t h = 0; h < probs.dim(0); ++h)
        out.slice(h).noalias() = probs.slice(h) * v.slice(h);
}

void merge_heads_forward(Tensor &out, const Tensor &ctx)
{
    const int64_t H = ctx.dim(0), T = ctx.dim(1), d = ctx.dim(2);
    MatrixMap o = out.matrix();
    for (int64_t h = 0; h < H; ++h)
        o.block(0, h * d, T, d) = ctx.slice(h);
}

void gelu_tanh_forward(Tensor &out, const Tensor &inp)
{
    const float c = std::sqrt(2.0f / static_cast<float>(M_PI));
    Eigen::Map<const Eigen::ArrayXf> u(inp.data(), inp.numel());
    Eigen::Map<Eigen::ArrayXf> y(out.data(), out.numel());
    y = 0.5f * u * (1.0f + (c * (u + 0.044715f * u.cube())).tanh());
}

void gelu_erf_forward(Tensor &out, const Tensor &inp)
{
    const float *u = inp.data();
    float *y = out.data();
    for (int64_t i = 0; i < inp.numel(); ++i)
        y[i] = 0.5f * u[i] * (1.0f + std::erf(u[i] * static_cast<float>(M_SQRT1_2)));
}

void relu_forward(Tensor &out, const Tensor &inp)
{
    Eigen::Map<const Eigen::ArrayXf> u(inp.data(), inp.numel());
    Eigen::Map<Eigen::ArrayXf>(out.data(), out.numel()) = u.max(0.0f);
}

void logits_forward(Tensor &out, const Tensor &inp, const Tensor &wte)
{
    out.matrix().noalias() = inp.matrix() * wte.matrix().transpose();
}

} // namespace atlas::ops
