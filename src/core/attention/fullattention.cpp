#include "attention/fullattention.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace atlas::attention {

namespace {

// Turns row r of the block's scores (keys [0,nk)) into probabilities for query i, in place.
void softmaxRow(Eigen::Ref<RowVector> row, int64_t limit, const RowVector &keyWeight, bool padded)
{
    const float ninf = -std::numeric_limits<float>::infinity();
    auto allowed = row.head(limit).array();
    const float mx = padded ? (keyWeight.head(limit).array() > 0.0f).select(allowed, ninf).maxCoeff()
                            : (limit > 0 ? allowed.maxCoeff() : ninf);
    if (mx == ninf) { // nothing to attend: zero weights, as the engine's softmax does
        row.setZero();
        return;
    }
    allowed = (allowed - mx).exp();
    if (padded)
        allowed *= keyWeight.head(limit).array();
    allowed /= allowed.sum();
    row.tail(row.size() - limit).setZero();
}

} // namespace

AttentionResult full_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const AttentionOptions &options)
{
    checkHeadInputs("full", q, k, v, options);
    const int64_t T = q.rows(), d = q.cols();
    const float scale = 1.0f / std::sqrt(float(d));
    const std::vector<unsigned char> ok = allowedKeys(T, options.padding);
    RowVector keyWeight(T);
    for (int64_t j = 0; j < T; ++j)
        keyWeight[j] = ok[size_t(j)];
    const bool padded = !options.padding.empty();

    AttentionResult result;
    result.context = Tensor({T, d});
    MatrixMap out = result.context.matrix();
    if (options.dense) {
        result.weights = Tensor({T, T});
        result.mask = Tensor({T, T});
    }
    // About 8 MiB of scores per block: large products for the BLAS, small memory.
    const int64_t rows = std::clamp<int64_t>((int64_t(1) << 21) / T, 8, 256);
    MatrixRM scores(std::min(rows, T), T);
    for (int64_t s0 = 0; s0 < T; s0 += rows) {
        const int64_t nb = std::min(rows, T - s0), nk = options.causal ? s0 + nb : T;
        auto block = scores.topLeftCorner(nb, nk);
        block.noalias() = (scale * q.middleRows(s0, nb)) * k.topRows(nk).transpose();
        // On this thread: OpenBLAS's threads spin for a while after each product, and two threads of ours
        // competing with them made the whole kernel about 12 % slower at 16384 tokens.
        for (int64_t r = 0; r < nb; ++r)
            softmaxRow(block.row(r), options.causal ? s0 + r + 1 : nk, keyWeight, padded);
        out.middleRows(s0, nb).noalias() = block * v.topRows(nk);
        if (options.dense) {
            result.weights.matrix().block(s0, 0, nb, nk) = block;
            for (int64_t r = 0; r < nb; ++r)
                for (int64_t j = 0; j < (options.causal ? s0 + r + 1 : T); ++j)
                    result.mask.matrix()(s0 + r, j) = keyWeight[j];
        }
    }
    return result;
}

} // namespace atlas::attention
