#include "attention/lshattention.h"

#include "attention/blockattention.h"
#include "attention/gaussianstream.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

namespace atlas::attention {

namespace {

// q is (T,d); rotation is (d,b/2): bucket of row t = argmax over [q_t R, −q_t R] (the first on a tie).
// By blockProduct, not the BLAS: OpenBLAS's threads spin for a while after each call and would slow the block
// passes that follow on the same cores.
std::vector<int> hashRound(ConstMatrixMap q, const MatrixRM &rotation, int buckets)
{
    const int64_t T = q.rows(), d = q.cols(), half = rotation.cols(), width = (half + 15) / 16 * 16;
    std::vector<int> bucket(size_t(T), 0);
    if (buckets == 1)
        return bucket;
    MatrixRM padded = MatrixRM::Zero(d, width);
    padded.leftCols(half) = rotation;
    parallelFor((T + 63) / 64, 4, [&](int64_t begin, int64_t end) {
        MatrixRM rows(64, d), projected(64, width);
        for (int64_t b = begin; b < end; ++b) {
            const int64_t first = b * 64, n = std::min<int64_t>(64, T - first);
            rows.setZero();
            rows.topRows(n) = q.middleRows(first, n);
            blockProduct(projected.data(), rows.data(), padded.data(), 64, d, width);
            for (int64_t t = 0; t < n; ++t)
                bucket[size_t(first + t)] = lshBucketOf(projected.row(t).head(half));
        }
    });
    return bucket;
}

// out (T,d) = Σ_r exp(lse_r − L) out_r with L = logsumexp_r lse_r, the Reformer combination of rounds; returns
// L (T). lses are per round (T).
std::vector<double> combineRounds(
    const std::vector<MatrixRM> &outs, const std::vector<std::vector<double>> &lses, MatrixMap out)
{
    const double ninf = -std::numeric_limits<double>::infinity();
    std::vector<double> total(size_t(out.rows()), ninf);
    for (int64_t i = 0; i < out.rows(); ++i) {
        double mx = ninf;
        for (const auto &lse : lses)
            mx = std::max(mx, lse[size_t(i)]);
        out.row(i).setZero();
        if (mx == ninf)
            continue;
        double sum = 0.0;
        for (const auto &lse : lses)
            sum += std::exp(lse[size_t(i)] - mx);
        total[size_t(i)] = mx + std::log(sum);
        for (size_t r = 0; r < outs.size(); ++r)
            out.row(i) += float(std::exp(lses[r][size_t(i)] - total[size_t(i)])) * outs[r].row(i);
    }
    return total;
}

} // namespace

void checkLshParams(const LshParams &p)
{
    if (p.rounds < 1)
        throw Error("attention kernel 'lsh': parameter 'rounds' must be at least 1, got " + std::to_string(p.rounds));
    if (p.buckets < 1 || (p.buckets != 1 && p.buckets % 2 != 0))
        throw Error("attention kernel 'lsh': parameter 'buckets' must be 1 or even (angular LSH hashes to ±b/2 "
                    "directions), got "
            + std::to_string(p.buckets));
    if (p.chunk < 1)
        throw Error("attention kernel 'lsh': parameter 'chunk' must be at least 1, got " + std::to_string(p.chunk));
}

std::vector<int> lshSortByBucket(const std::vector<int> &bucket, int buckets)
{
    std::vector<int> start(size_t(buckets) + 1, 0), order(bucket.size());
    for (int b : bucket)
        ++start[size_t(b) + 1];
    for (size_t b = 0; b < size_t(buckets); ++b)
        start[b + 1] += start[b];
    for (size_t t = 0; t < bucket.size(); ++t)
        order[size_t(start[size_t(bucket[t])]++)] = int(t);
    return order;
}

std::pair<int64_t, int64_t> lshChunkKeys(int64_t chunkIndex, int64_t chunk, int64_t T)
{
    return {std::max<int64_t>(0, (chunkIndex - 1) * chunk), std::min(T, (chunkIndex + 1) * chunk)};
}

AttentionResult lsh_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const LshParams &params, const AttentionOptions &options)
{
    checkLshParams(params);
    checkHeadInputs("lsh", q, k, v, options);
    const int64_t T = q.rows(), d = q.cols(), half = params.buckets / 2, c = params.chunk;
    const MatrixRM keys = q.rowwise().normalized(); // shared QK; a zero row stays zero
    const BlockAttention attention("lsh", q, ConstMatrixMap(keys.data(), T, d), v, options, 1.0f / std::sqrt(float(d)));
    const bool causal = options.causal;
    const auto rule = [causal](int i, int j) {
        if (causal && j > i)
            return KeyRule::Masked;
        return j == i ? KeyRule::SelfPenalised : KeyRule::Allowed;
    };

    AttentionResult result;
    result.extras["buckets"] = Tensor({params.rounds, T});
    result.extras["rotations"] = Tensor({params.rounds, d, half});
    std::unique_ptr<DenseRecord> dense = options.dense ? std::make_unique<DenseRecord>(T) : nullptr;
    std::vector<MatrixRM> outs(size_t(params.rounds), MatrixRM(T, d));
    std::vector<std::vector<double>> lses(size_t(params.rounds));
    for (int r = 0; r < params.rounds; ++r) {
        const MatrixRM rotation = GaussianStream(params.seed, uint64_t(r)).matrix(d, half);
        const std::vector<int> bucket = hashRound(q, rotation, params.buckets);
        std::copy(rotation.data(), rotation.data() + rotation.size(), result.extras["rotations"].data() + r * d * half);
        for (int64_t t = 0; t < T; ++t)
            result.extras["buckets"].data()[r * T + t] = float(bucket[size_t(t)]);
        const std::vector<int> order = lshSortByBucket(bucket, params.buckets);
        const auto chunkBlock = [&](int64_t a, std::vector<int> &queries, std::vector<int> &keyPositions) {
            queries.assign(order.begin() + a * c, order.begin() + std::min(T, (a + 1) * c));
            const auto [first, last] = lshChunkKeys(a, c, T);
            keyPositions.assign(order.begin() + first, order.begin() + last);
        };
        RowState state(T, d);
        attention.pass(state, dense.get(), (T + c - 1) / c, chunkBlock, rule);
        BlockAttention::finish(state, MatrixMap(outs[size_t(r)].data(), T, d), &lses[size_t(r)]);
    }
    result.context = Tensor({T, d});
    const std::vector<double> total = combineRounds(outs, lses, result.context.matrix());
    if (dense)
        BlockAttention::finishDense(*dense, total, result);
    return result;
}

} // namespace atlas::attention
