#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "util/parallel.h"

#include <algorithm>
#include <limits>

namespace atlas::ops {

namespace {

// Which of the S keys query i may attend: j < allowedEnd(i) and keyOk[j]. Shared by the mask's forward and
// backward so that the gradient flows exactly through the cells the forward kept.
struct AttentionMask
{
    AttentionMask(const Tensor &scores, bool causal, const std::vector<int> &padding)
        : causal(causal)
        , S(scores.dim(2))
        , keyOk(static_cast<size_t>(S), 1)
    {
        if (causal && S != scores.dim(1))
            throw Error("a causal mask needs as many keys as queries (scores " + scores.shapeString() + ")");
        for (int p : padding) {
            if (p < 0 || p >= S)
                throw Error("padding position " + std::to_string(p) + " is outside the input (0.."
                    + std::to_string(S - 1) + ")");
            keyOk[static_cast<size_t>(p)] = 0;
        }
    }
    int64_t allowedEnd(int64_t i) const { return causal ? i + 1 : S; }
    bool allowed(int64_t i, int64_t j) const { return j < allowedEnd(i) && keyOk[static_cast<size_t>(j)]; }

    bool causal;
    int64_t S;
    std::vector<unsigned char> keyOk;
};

} // namespace

void split_heads_forward(const std::vector<Tensor *> &parts, const Tensor &x, int heads)
{
    const int64_t T = x.dim(0), D = x.dim(1) / int64_t(parts.size()), d = D / heads;
    ConstMatrixMap m = x.matrix();
    for (size_t p = 0; p < parts.size(); ++p)
        for (int h = 0; h < heads; ++h)
            parts[p]->slice(h) = m.block(0, int64_t(p) * D + h * d, T, d);
}

void split_heads_backward(Tensor &dx, const std::vector<const Tensor *> &dparts)
{
    const Tensor &first = *dparts.front();
    const int64_t H = first.dim(0), T = first.dim(1), d = first.dim(2), D = H * d;
    requireShape(dx, {T, int64_t(dparts.size()) * D}, "split heads backward dx");
    MatrixMap g = dx.matrix();
    for (size_t p = 0; p < dparts.size(); ++p) {
        requireShape(*dparts[p], first.shape(), "split heads backward parts");
        for (int64_t h = 0; h < H; ++h)
            g.block(0, int64_t(p) * D + h * d, T, d) += dparts[p]->slice(h);
    }
}

void split_heads_forward(Tensor &q, Tensor &k, Tensor &v, const Tensor &qkv, int heads)
{
    split_heads_forward({&q, &k, &v}, qkv, heads);
}

void split_heads_backward(Tensor &dqkv, const Tensor &dq, const Tensor &dk, const Tensor &dv)
{
    split_heads_backward(dqkv, {&dq, &dk, &dv});
}

void attention_scores_forward(Tensor &out, const Tensor &q, const Tensor &k, float scale)
{
    // The scale rides on the product (GEMM's alpha) instead of a second pass over the T x T result.
    for (int64_t h = 0; h < q.dim(0); ++h)
        out.slice(h).noalias() = (scale * q.slice(h)) * k.slice(h).transpose();
}

void attention_scores_backward(
    Tensor &dq, Tensor &dk, const Tensor &dout, const Tensor &q, const Tensor &k, float scale)
{
    const int64_t H = q.dim(0), T = q.dim(1);
    requireShape(dout, {H, T, k.dim(1)}, "attention scores backward dout");
    requireShape(dq, q.shape(), "attention scores backward dq");
    requireShape(dk, k.shape(), "attention scores backward dk");
    for (int64_t h = 0; h < H; ++h) {
        dq.slice(h).noalias() += (scale * dout.slice(h)) * k.slice(h);
        dk.slice(h).noalias() += (scale * dout.slice(h).transpose()) * q.slice(h);
    }
}

void attention_mask_forward(Tensor &out, const Tensor &scores, bool causal, const std::vector<int> &padding)
{
    const int64_t H = scores.dim(0), T = scores.dim(1), S = scores.dim(2);
    const AttentionMask mask(scores, causal, padding);
    const float ninf = -std::numeric_limits<float>::infinity();
    std::vector<int64_t> padded; // the keys masked in every row
    for (int64_t j = 0; j < S; ++j)
        if (!mask.keyOk[static_cast<size_t>(j)])
            padded.push_back(j);
    parallelFor(H * T, std::max<int64_t>(1, 65536 / std::max<int64_t>(S, 1)), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t allowedEnd = mask.allowedEnd(r % T);
            const float *s = scores.data() + r * S;
            float *o = out.data() + r * S;
            std::copy(s, s + allowedEnd, o);
            std::fill(o + allowedEnd, o + S, ninf);
            for (const int64_t j : padded)
                o[j] = ninf;
        }
    });
}

void attention_mask_backward(Tensor &dscores, const Tensor &dout, bool causal, const std::vector<int> &padding)
{
    const int64_t H = dout.dim(0), T = dout.dim(1), S = dout.dim(2);
    requireShape(dscores, dout.shape(), "attention mask backward dscores");
    const AttentionMask mask(dout, causal, padding);
    parallelFor(H * T, 1 << 14, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t i = r % T;
            const float *g = dout.data() + r * S;
            float *o = dscores.data() + r * S;
            for (int64_t j = 0; j < S; ++j)
                if (mask.allowed(i, j))
                    o[j] += g[j];
        }
    });
}

void sliding_window_mask(Tensor &scores, int window)
{
    const int64_t H = scores.dim(0), T = scores.dim(1);
    for (int64_t h = 0; h < H; ++h)
        for (int64_t i = window; i < T; ++i)
            std::fill_n(
                scores.data() + (h * T + i) * scores.dim(2), i - window + 1, -std::numeric_limits<float>::infinity());
}

void attention_context_forward(Tensor &out, const Tensor &probs, const Tensor &v)
{
    for (int64_t h = 0; h < probs.dim(0); ++h)
        out.slice(h).noalias() = probs.slice(h) * v.slice(h);
}

void attention_context_backward(Tensor &dprobs, Tensor &dv, const Tensor &dout, const Tensor &probs, const Tensor &v)
{
    requireShape(dprobs, probs.shape(), "attention context backward dprobs");
    requireShape(dv, v.shape(), "attention context backward dv");
    requireShape(dout, {probs.dim(0), probs.dim(1), v.dim(2)}, "attention context backward dout");
    for (int64_t h = 0; h < probs.dim(0); ++h) {
        dprobs.slice(h).noalias() += dout.slice(h) * v.slice(h).transpose();
        dv.slice(h).noalias() += probs.slice(h).transpose() * dout.slice(h);
    }
}

void merge_heads_forward(Tensor &out, const Tensor &ctx)
{
    const int64_t H = ctx.dim(0), T = ctx.dim(1), d = ctx.dim(2);
    MatrixMap o = out.matrix();
    for (int64_t h = 0; h < H; ++h)
        o.block(0, h * d, T, d) = ctx.slice(h);
}

void merge_heads_backward(Tensor &dctx, const Tensor &dout)
{
    const int64_t H = dctx.dim(0), T = dctx.dim(1), d = dctx.dim(2);
    requireShape(dout, {T, H * d}, "merge heads backward dout");
    ConstMatrixMap g = dout.matrix();
    for (int64_t h = 0; h < H; ++h)
        dctx.slice(h) += g.block(0, h * d, T, d);
}

} // namespace atlas::ops
