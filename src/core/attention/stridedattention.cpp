#include "attention/stridedattention.h"

#include "attention/blockattention.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace atlas::attention {

void checkStridedParams(const StridedParams &params)
{
    if (params.stride < 1)
        throw Error(
            "attention kernel 'strided': parameter 'stride' must be at least 1, got " + std::to_string(params.stride));
}

AttentionResult strided_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const StridedParams &params, const AttentionOptions &options)
{
    checkStridedParams(params);
    RowState state(q.rows(), q.cols()); // first: see RowState
    const BlockAttention attention("strided", q, k, v, options, 1.0f / std::sqrt(float(q.cols())));
    const int64_t T = q.rows(), l = params.stride;
    const bool causal = options.causal;

    // Pass 1, the band |i − j| <= l.
    const auto bandBlock = [&](int64_t b, std::vector<int> &queries, std::vector<int> &keys) {
        const auto [begin, end] = queryRun(b, T, queries);
        for (int64_t j = std::max<int64_t>(0, begin - l); j < std::min(T, causal ? end : end + l); ++j)
            keys.push_back(int(j));
    };
    const auto bandRule
        = [&](int i, int j) { return (causal && j > i) || std::abs(i - j) > l ? KeyRule::Masked : KeyRule::Allowed; };
    // Pass 2, the columns (i − j) mod l = 0 outside the band: residue class r's members r, r+l, … attend
    // each other. Block b is members [first, first+64) of class r.
    const int64_t perClass = (T + l - 1) / l, blocksPerClass = queryRuns(perClass);
    const auto columnBlock = [&](int64_t b, std::vector<int> &queries, std::vector<int> &keys) {
        const int64_t r = b / blocksPerClass, first = (b % blocksPerClass) * kQueryRun;
        for (int64_t i = r + first * l; i < T && i < r + (first + kQueryRun) * l; i += l)
            queries.push_back(int(i));
        if (queries.empty())
            return;
        for (int64_t j = r; j < (causal ? int64_t(queries.back()) + 1 : T); j += l)
            keys.push_back(int(j));
    };
    const auto columnRule
        = [&](int i, int j) { return (causal && j > i) || std::abs(i - j) <= l ? KeyRule::Masked : KeyRule::Allowed; };

    AttentionResult result;
    std::unique_ptr<DenseRecord> dense = options.dense ? std::make_unique<DenseRecord>(T) : nullptr;
    attention.pass(state, dense.get(), queryRuns(T), bandBlock, bandRule);
    attention.pass(state, dense.get(), std::min(l, T) * blocksPerClass, columnBlock, columnRule);
    BlockAttention::complete(state, dense.get(), result);
    return result;
}

} // namespace atlas::attention
