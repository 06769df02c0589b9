#include "attention/linformerattention.h"

#include "attention/gaussianstream.h"
#include "util/error.h"

#include <cmath>
#include <limits>

namespace atlas::attention {

namespace {

// E (k,T) from the parameters, padding columns zeroed.
Tensor projection(const LinformerParams &p, int64_t T, const std::vector<int> &padding)
{
    const auto fail = [](const std::string &what) { throw Error("attention kernel 'linformer': " + what); };
    Tensor E;
    if (!p.projection.empty()) {
        if (p.projection.rank() != 2 || p.projection.dim(1) != T)
            fail("the given projection must be (k," + std::to_string(T) + "), got " + p.projection.shapeString());
        E = p.projection;
    } else if (p.k < 1) {
        fail("k must be at least 1, got " + std::to_string(p.k));
    } else if (p.identity) {
        if (p.k != T)
            fail("the identity projection needs k = T = " + std::to_string(T) + ", got k = " + std::to_string(p.k));
        E = Tensor({T, T});
        E.matrix().setIdentity();
    } else {
        E = GaussianStream(p.seed, 0).tensor(p.k, T, 1.0 / std::sqrt(double(p.k)));
    }
    for (int j : padding) // (a given projection is copied before the first write)
        E.matrix().col(j).setZero();
    return E;
}

} // namespace

AttentionResult linformer_attention_forward(ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v,
    const LinformerParams &params, const AttentionOptions &options)
{
    if (options.causal)
        throw Error("attention kernel 'linformer' cannot be causal: each projected key and value mixes all T "
                    "positions, future ones included, so no mask on its scores can hide the future");
    checkHeadInputs("linformer", q, k, v, options);
    const int64_t T = q.rows(), d = q.cols();
    const Tensor projected = projection(params, T, options.padding);
    const ConstMatrixMap E = projected.matrix();
    const MatrixRM kp = E * k, vp = E * v; // (k,d)
    Tensor scores = Tensor::uninitialized({T, E.rows()});
    MatrixMap p = scores.matrix(); // (T,k)
    p.noalias() = (q * (1.0f / std::sqrt(float(d)))) * kp.transpose();
    // A projected key made of no real key (E's row is zero on every non-padding position) is masked, so that
    // with E = I padding is masked exactly as in full attention.
    const RowVector keep = (E.array() != 0.0f).rowwise().any().cast<float>().transpose();
    const float ninf = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < T; ++i) { // on this thread: OpenBLAS's threads still spin after the products
        auto row = p.row(i).array();
        const float mx = (keep.array() > 0.0f).select(row, ninf).maxCoeff();
        if (mx == ninf) {
            row.setZero();
            continue;
        }
        row = (row - mx).exp() * keep.array();
        row /= row.sum();
    }
    AttentionResult result;
    result.context = Tensor({T, d});
    result.context.matrix().noalias() = p * vp;
    result.extras["projection"] = projected;
    if (options.dense) {
        result.weights = Tensor({T, T});
        result.weights.matrix().noalias() = p * E;
        result.mask = Tensor({T, T}, 1.0f);
        for (int j : options.padding)
            result.mask.matrix().col(j).setZero();
    }
    return result;
}

} // namespace atlas::attention
