#include "attention/fixedattention.h"

#include "attention/blockattention.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace atlas::attention {

void checkFixedParams(const FixedParams &params)
{
    if (params.stride < 1)
        throw Error(
            "attention kernel 'fixed': parameter 'stride' must be at least 1, got " + std::to_string(params.stride));
    if (params.summary < 0 || params.summary > params.stride)
        throw Error("attention kernel 'fixed': parameter 'summary' must be in [0, stride = "
            + std::to_string(params.stride) + "], got " + std::to_string(params.summary));
}

AttentionResult fixed_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const FixedParams &params, const AttentionOptions &options)
{
    checkFixedParams(params);
    RowState state(q.rows(), q.cols()); // first: see RowState
    const BlockAttention attention("fixed", q, k, v, options, 1.0f / std::sqrt(float(q.cols())));
    const int64_t T = q.rows(), l = params.stride, c = params.summary;
    const bool causal = options.causal;
    const auto isSummary = [l, c](int64_t j) { return j % l >= l - c; };

    const auto block = [&](int64_t b, std::vector<int> &queries, std::vector<int> &keys) {
        const auto [begin, end] = queryRun(b, T, queries);
        // The l-blocks the queries span, then the summary columns outside them.
        const int64_t spanBegin = begin / l * l, spanEnd = std::min(T, causal ? end : (end + l - 1) / l * l);
        for (int64_t j = spanBegin; j < spanEnd; ++j)
            keys.push_back(int(j));
        for (int64_t j = l - c; c > 0 && j < (causal ? end : T); j += (j % l == l - 1 ? l - c + 1 : 1))
            if (j < spanBegin || j >= spanEnd)
                keys.push_back(int(j));
    };
    const auto rule = [&](int i, int j) {
        if (causal && j > i)
            return KeyRule::Masked;
        return (i / l == j / l || isSummary(j)) ? KeyRule::Allowed : KeyRule::Masked;
    };

    AttentionResult result;
    std::unique_ptr<DenseRecord> dense = options.dense ? std::make_unique<DenseRecord>(T) : nullptr;
    attention.pass(state, dense.get(), queryRuns(T), block, rule);
    BlockAttention::complete(state, dense.get(), result);
    return result;
}

} // namespace atlas::attention
