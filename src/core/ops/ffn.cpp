#include "ops/ops.h"
#include "ops/shapecheck.h"

#include <algorithm>

namespace atlas::ops {

namespace {

// Rows [begin, end) of a (T,C) tensor as a (end − begin, C) tensor of their own.
Tensor copyRows(const Tensor &t, int64_t begin, int64_t end)
{
    Tensor rows({end - begin, t.dim(1)});
    rows.matrix() = t.matrix().middleRows(begin, end - begin);
    return rows;
}

} // namespace

std::pair<int64_t, int64_t> chunk_rows(int64_t T, int chunks, int chunk)
{
    const int64_t size = (T + chunks - 1) / std::max(chunks, 1);
    const int64_t begin = std::min(T, size * chunk);
    return {begin, std::min(T, begin + size)};
}

void ffn_chunked_forward(Tensor &out, const Tensor &inp, const FfnWeights &w, int chunks)
{
    const int64_t T = inp.dim(0), F = w.fcWeight.dim(1);
    requireShape(out, {T, w.projWeight.dim(1)}, "chunked FFN output");
    for (int c = 0; c < chunks; ++c) {
        const auto [begin, end] = chunk_rows(T, chunks, c);
        if (begin == end)
            continue;
        const Tensor x = copyRows(inp, begin, end);
        Tensor up({end - begin, F}), act({end - begin, F}), down({end - begin, out.dim(1)});
        linear_forward(up, x, w.fcWeight, w.fcBias);
        activation_forward(act, up, w.activation);
        linear_forward(down, act, w.projWeight, w.projBias);
        out.matrix().middleRows(begin, end - begin) = down.matrix();
    }
}

void ffn_chunked_backward(
    Tensor &dinp, const FfnGradients &g, const Tensor &dout, const Tensor &inp, const FfnWeights &w, int chunks)
{
    const int64_t T = inp.dim(0), F = w.fcWeight.dim(1);
    requireShape(dinp, inp.shape(), "chunked FFN backward dinp");
    requireShape(dout, {T, w.projWeight.dim(1)}, "chunked FFN backward dout");
    for (int c = 0; c < chunks; ++c) {
        const auto [begin, end] = chunk_rows(T, chunks, c);
        if (begin == end)
            continue;
        const int64_t rows = end - begin;
        const Tensor x = copyRows(inp, begin, end), gout = copyRows(dout, begin, end);
        Tensor up({rows, F}), act({rows, F});
        linear_forward(up, x, w.fcWeight, w.fcBias);
        activation_forward(act, up, w.activation);
        Tensor dact({rows, F}), dup({rows, F}), dx({rows, inp.dim(1)});
        linear_backward(dact, g.projWeight, g.projBias, gout, act, w.projWeight);
        activation_backward(dup, dact, up, w.activation);
        linear_backward(dx, g.fcWeight, g.fcBias, dup, x, w.fcWeight);
        dinp.matrix().middleRows(begin, rows) += dx.matrix();
    }
}

} // namespace atlas::ops
