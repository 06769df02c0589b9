#include "ops/ops.h"
#include "ops/shapecheck.h"
#include "tensor/packedrows.h"

#include <cmath>

namespace atlas::ops {

void embedding_forward(Tensor &out, const Tensor &wte, const std::vector<int> &tokens)
{
    const int64_t V = wte.dim(0), D = wte.dim(1);
    requireShape(out, {static_cast<int64_t>(tokens.size()), D}, "embedding output");
    for (size_t t = 0; t < tokens.size(); ++t) {
        if (tokens[t] < 0 || tokens[t] >= V)
            throw Error("token id " + std::to_string(tokens[t]) + " at position " + std::to_string(t)
                + " is outside the vocabulary [0, " + std::to_string(V) + ")");
        if (const PackedRows *packed = wte.packing())
            packed->decodeRows(tokens[t], 1, out.data() + int64_t(t) * D);
        else
            out.matrix().row(static_cast<Eigen::Index>(t)) = wte.matrix().row(tokens[t]);
    }
}

void embedding_backward(Tensor &dwte, const Tensor &dout, const std::vector<int> &tokens)
{
    requireShape(dout, {static_cast<int64_t>(tokens.size()), dwte.dim(1)}, "embedding backward dout");
    MatrixMap dw = dwte.matrix();
    ConstMatrixMap g = dout.matrix();
    // Serial on purpose: two positions holding the same token add into the same row.
    for (size_t t = 0; t < tokens.size(); ++t) {
        if (tokens[t] < 0 || tokens[t] >= dwte.dim(0))
            throw Error("token id " + std::to_string(tokens[t]) + " at position " + std::to_string(t)
                + " is outside the vocabulary [0, " + std::to_string(dwte.dim(0)) + ")");
        dw.row(tokens[t]) += g.row(static_cast<Eigen::Index>(t));
    }
}

void positions_learned_forward(Tensor &out, const Tensor &wpe)
{
    const int64_t T = out.dim(0);
    if (T > wpe.dim(0))
        throw Error(
            "sequence of " + std::to_string(T) + " tokens is longer than the context of " + std::to_string(wpe.dim(0)));
    out.matrix() = wpe.matrix().topRows(T);
}

void positions_learned_backward(Tensor &dwpe, const Tensor &dout)
{
    const int64_t T = dout.dim(0);
    if (T > dwpe.dim(0) || dout.dim(1) != dwpe.dim(1))
        throw Error("positions backward: dout " + dout.shapeString() + " does not fit dwpe " + dwpe.shapeString());
    dwpe.matrix().topRows(T) += dout.matrix();
}

void add_forward(Tensor &out, const Tensor &a, const Tensor &b)
{
    requireShape(b, a.shape(), "residual add");
    requireShape(out, a.shape(), "residual add output");
    Eigen::Map<Eigen::ArrayXf>(out.data(), out.numel())
        = Eigen::Map<const Eigen::ArrayXf>(a.data(), a.numel()) + Eigen::Map<const Eigen::ArrayXf>(b.data(), b.numel());
}

void add_backward(Tensor &da, Tensor &db, const Tensor &dout)
{
    requireShape(da, dout.shape(), "residual add backward da");
    requireShape(db, dout.shape(), "residual add backward db");
    Eigen::Map<const Eigen::ArrayXf> g(dout.data(), dout.numel());
    Eigen::Map<Eigen::ArrayXf>(da.data(), da.numel()) += g;
    Eigen::Map<Eigen::ArrayXf>(db.data(), db.numel()) += g;
}

void subtract_forward(Tensor &out, const Tensor &a, const Tensor &b)
{
    requireShape(b, a.shape(), "subtract");
    requireShape(out, a.shape(), "subtract output");
    Eigen::Map<Eigen::ArrayXf>(out.data(), out.numel())
        = Eigen::Map<const Eigen::ArrayXf>(a.data(), a.numel()) - Eigen::Map<const Eigen::ArrayXf>(b.data(), b.numel());
}

void average_forward(Tensor &out, const Tensor &a, const Tensor &b)
{
    requireShape(b, a.shape(), "stream average");
    requireShape(out, a.shape(), "stream average output");
    Eigen::Map<Eigen::ArrayXf>(out.data(), out.numel()) = 0.5f
        * (Eigen::Map<const Eigen::ArrayXf>(a.data(), a.numel())
            + Eigen::Map<const Eigen::ArrayXf>(b.data(), b.numel()));
}

void average_backward(Tensor &da, Tensor &db, const Tensor &dout)
{
    requireShape(da, dout.shape(), "stream average backward da");
    requireShape(db, dout.shape(), "stream average backward db");
    const auto g = 0.5f * Eigen::Map<const Eigen::ArrayXf>(dout.data(), dout.numel());
    Eigen::Map<Eigen::ArrayXf>(da.data(), da.numel()) += g;
    Eigen::Map<Eigen::ArrayXf>(db.data(), db.numel()) += g;
}

} // namespace atlas::ops
