#include "attention/bigbirdattention.h"

#include "attention/blockattention.h"
#include "attention/gaussianstream.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace atlas::attention {

void checkBigBirdParams(const BigBirdParams &p)
{
    const auto fail = [](const std::string &what) { throw Error("attention kernel 'bigbird': parameter " + what); };
    if (p.block < 1)
        fail("'block' must be at least 1, got " + std::to_string(p.block));
    if (p.windowBlocks < 0 || (p.windowBlocks > 0 && p.windowBlocks % 2 == 0))
        fail("'window_blocks' must be odd (the own block and as many on each side), or 0 for no window, got "
            + std::to_string(p.windowBlocks));
    if (p.globalBlocks < 0)
        fail("'global_blocks' must not be negative, got " + std::to_string(p.globalBlocks));
    if (p.randomBlocks < 0)
        fail("'random_blocks' must not be negative, got " + std::to_string(p.randomBlocks));
}

namespace {

// Key blocks of every query block: global, window and random, sorted and distinct. A global query block's
// list is empty (it attends every key). randomTable (n, randomBlocks) records the random draws.
std::vector<std::vector<int>> keyBlocks(int64_t n, const BigBirdParams &p, Tensor &randomTable)
{
    // half −1: no window at all, not even the own block (window_blocks 0: the paper's "random" and "global" panels)
    const int64_t globals = std::min<int64_t>(p.globalBlocks, n),
                  half = p.windowBlocks > 0 ? (p.windowBlocks - 1) / 2 : -1;
    randomTable = Tensor({n, p.randomBlocks}, -1.0f);
    GaussianStream stream(p.seed, 0);
    std::vector<std::vector<int>> lists(static_cast<size_t>(n));
    for (int64_t a = globals; a < n; ++a) {
        std::vector<int> &list = lists[size_t(a)], candidates;
        for (int64_t b = 0; b < n; ++b)
            (b < globals || std::abs(a - b) <= half ? list : candidates).push_back(int(b));
        for (int r = 0; r < p.randomBlocks && !candidates.empty(); ++r) { // partial Fisher–Yates
            const size_t pick = size_t(stream.below(candidates.size()));
            randomTable.data()[a * p.randomBlocks + r] = float(candidates[pick]);
            list.push_back(candidates[pick]);
            candidates[pick] = candidates.back();
            candidates.pop_back();
        }
        std::sort(list.begin(), list.end());
    }
    return lists;
}

} // namespace

AttentionResult bigbird_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const BigBirdParams &params, const AttentionOptions &options)
{
    checkBigBirdParams(params);
    RowState state(q.rows(), q.cols()); // first: see RowState
    const BlockAttention attention("bigbird", q, k, v, options, 1.0f / std::sqrt(float(q.cols())));
    const int64_t T = q.rows(), B = params.block, n = (T + B - 1) / B;
    const int64_t globalRows = std::min<int64_t>(params.globalBlocks * B, T);
    AttentionResult result;
    const std::vector<std::vector<int>> lists = keyBlocks(n, params, result.extras["random_blocks"]);
    const bool causal = options.causal;
    const auto rule = [causal](int i, int j) { return causal && j > i ? KeyRule::Masked : KeyRule::Allowed; };
    const auto range = [](std::vector<int> &out, int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t)
            out.push_back(int(t));
    };
    const auto sparseBlock = [&](int64_t a, std::vector<int> &queries, std::vector<int> &keys) {
        range(queries, a * B, std::min(T, (a + 1) * B));
        for (int b : lists[size_t(a)])
            range(keys, b * B, std::min(T, (b + 1) * B));
    };
    // Global query rows, 64 at a time, against every key.
    const auto globalBlock = [&](int64_t a, std::vector<int> &queries, std::vector<int> &keys) {
        range(queries, a * 64, std::min(globalRows, (a + 1) * 64));
        range(keys, 0, causal ? int64_t(queries.back()) + 1 : T);
    };
    std::unique_ptr<DenseRecord> dense = options.dense ? std::make_unique<DenseRecord>(T) : nullptr;
    attention.pass(state, dense.get(), n, sparseBlock, rule); // global blocks have empty key lists
    attention.pass(state, dense.get(), (globalRows + 63) / 64, globalBlock, rule);
    BlockAttention::complete(state, dense.get(), result);
    return result;
}

} // namespace atlas::attention
