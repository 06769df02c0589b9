#include "analysis/ffnsparsity.h"

#include "trace/names.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace atlas {

namespace {

// For each token, `keep(row)` marks the neurons to keep; returns ‖(A ⊙ (1 − keep)) W‖ / ‖A W + b‖ over the whole
// [T, D], i.e. the error the dropped neurons make, and fills per-token errors when asked.
template <typename Keep>
double sparseError(const MatrixRM &act, const MatrixRM &dense, const MatrixRM &proj, Keep keep,
    MatrixRM *kept = nullptr, std::vector<double> *perToken = nullptr)
{
    MatrixRM dropped = act;
    for (Eigen::Index t = 0; t < act.rows(); ++t) {
        const std::vector<char> mask = keep(t);
        for (Eigen::Index f = 0; f < act.cols(); ++f)
            if (mask[size_t(f)])
                dropped(t, f) = 0;
    }
    if (kept)
        *kept = act - dropped;
    const MatrixRM diff = dropped * proj;
    if (perToken) {
        perToken->resize(size_t(act.rows()));
        for (Eigen::Index t = 0; t < act.rows(); ++t)
            (*perToken)[size_t(t)] = diff.row(t).norm() / std::max(dense.row(t).norm(), 1e-30f);
    }
    return double(diff.norm()) / std::max(double(dense.norm()), 1e-30);
}

// One neuron per block of n: the largest |activation| of the block (the oracle controller).
std::vector<char> blockArgmax(const MatrixRM &act, Eigen::Index t, int n)
{
    std::vector<char> mask(size_t(act.cols()), 0);
    for (Eigen::Index begin = 0; begin < act.cols(); begin += n) {
        const Eigen::Index end = std::min<Eigen::Index>(act.cols(), begin + n);
        Eigen::Index best = begin;
        for (Eigen::Index f = begin + 1; f < end; ++f)
            if (std::fabs(act(t, f)) > std::fabs(act(t, best)))
                best = f;
        mask[size_t(best)] = 1;
    }
    return mask;
}

} // namespace

std::string ffnSparsityProblem(const ModelConfig &config, const Trace &trace, int layer)
{
    if (config.isMoeLayer(layer))
        return "layer " + std::to_string(layer)
            + " is a mixture of experts: its experts keep no activations in the trace. Choose a dense layer or "
              "model (austen, reverse …): Sparse is Enough makes one dense feed-forward layer sparse";
    if (!trace.find(names::layerTensor(layer, "mlp.act")) || !trace.find(names::layerTensor(layer, "mlp.down")))
        return "layer " + std::to_string(layer) + "'s feed-forward activations (layer." + std::to_string(layer)
            + ".mlp.act) are not computed yet: run to the end (Ctrl+R)";
    return {};
}

FfnSparsity ffnSparsity(const Model &model, const Trace &trace, int layer, int blockSize)
{
    if (const std::string problem = ffnSparsityProblem(model.config, trace, layer); !problem.empty())
        throw Error(problem);
    const Tensor &actTensor = trace.tensor(names::layerTensor(layer, "mlp.act"));
    const int F = int(actTensor.dim(1));
    if (blockSize < 1 || blockSize > F)
        throw Error("block size " + std::to_string(blockSize) + ": must be in 1.." + std::to_string(F));
    const BlockWeights &b = model.blocks[size_t(layer)];
    const MatrixRM act = actTensor.matrix();
    const MatrixRM dense = trace.tensor(names::layerTensor(layer, "mlp.down")).matrix();
    // The down projection as [F, D]: the held [D, F] transposed.
    const Tensor down = b.weight(BlockPart::Down).unpacked();
    const MatrixRM proj = down.matrix().transpose();
    FfnSparsity s;
    s.layer = layer;
    s.tokens = int(act.rows());
    s.neurons = F;
    s.blockSize = blockSize;
    s.dense = actTensor;
    MatrixRM kept;
    s.error = sparseError(
        act, dense, proj, [&](Eigen::Index t) { return blockArgmax(act, t, blockSize); }, &kept, &s.tokenError);
    s.sparse = Tensor({act.rows(), act.cols()});
    s.sparse.matrix() = kept;
    s.positiveShare = double((act.array() > 0).count()) / double(std::max<Eigen::Index>(act.size(), 1));
    for (int k = 1; k <= F; k = k * 2 > F && k < F ? F : k * 2) {
        s.topKept.push_back(k);
        s.topError.push_back(sparseError(act, dense, proj, [&](Eigen::Index t) {
            std::vector<int> order(static_cast<size_t>(F));
            std::iota(order.begin(), order.end(), 0);
            std::partial_sort(order.begin(), order.begin() + k, order.end(),
                [&](int a, int c) { return std::fabs(act(t, a)) > std::fabs(act(t, c)); });
            std::vector<char> mask(static_cast<size_t>(F), 0);
            for (int i = 0; i < k; ++i)
                mask[size_t(order[size_t(i)])] = 1;
            return mask;
        }));
    }
    for (int n = 2; n <= std::min(64, F); n *= 2) {
        s.blockKept.push_back((F + n - 1) / n);
        s.blockError.push_back(sparseError(act, dense, proj, [&](Eigen::Index t) { return blockArgmax(act, t, n); }));
    }
    return s;
}

} // namespace atlas
