#include "attention/swinattention.h"

#include "attention/blockattention.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace atlas::attention {

void checkSwinParams(const SwinParams &params)
{
    if (params.window < 1)
        throw Error(
            "attention kernel 'swin': parameter 'window' must be at least 1, got " + std::to_string(params.window));
    if (params.shift < 0 || params.shift >= params.window)
        throw Error("attention kernel 'swin': parameter 'shift' must be in [0, window = "
            + std::to_string(params.window) + "), got " + std::to_string(params.shift));
    if (params.grid < 0)
        throw Error("attention kernel 'swin': parameter 'grid' must be 0 (text) or a grid's width, got "
            + std::to_string(params.grid));
}

std::vector<std::vector<int>> swinWindows(const SwinParams &params, int64_t T)
{
    checkSwinParams(params);
    const int64_t W = params.window, s = params.shift, G = params.grid;
    std::vector<std::vector<int>> windows;
    if (G == 0) {
        windows.resize(size_t(T + s + W - 1) / size_t(W));
        for (int64_t t = 0; t < T; ++t)
            windows[size_t((t + s) / W)].push_back(int(t));
    } else {
        // Columns past the last token hold no window: a grid wider than the input counts as T wide, so that the
        // window table never outgrows the input (grid=2000000000 would otherwise ask for gigabytes).
        const int64_t rows = (T + G - 1) / G, across = (std::min(G, T) - 1 + s) / W + 1, down = (rows - 1 + s) / W + 1;
        windows.resize(size_t(across * down));
        for (int64_t t = 0; t < T; ++t) // row by row: each window's positions come out ascending
            windows[size_t(((t / G + s) / W) * across + (t % G + s) / W)].push_back(int(t));
    }
    std::erase_if(windows, [](const std::vector<int> &w) { return w.empty(); });
    return windows;
}

AttentionResult swin_attention_forward(
    ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const SwinParams &params, const AttentionOptions &options)
{
    checkSwinParams(params);
    RowState state(q.rows(), q.cols()); // first: see RowState
    const BlockAttention attention("swin", q, k, v, options, 1.0f / std::sqrt(float(q.cols())));
    const int64_t T = q.rows();
    const std::vector<std::vector<int>> windows = swinWindows(params, T);
    const bool causal = options.causal;
    const auto block = [&](int64_t b, std::vector<int> &queries, std::vector<int> &keys) {
        queries = windows[size_t(b)];
        keys = windows[size_t(b)];
    };
    const auto rule = [causal](int i, int j) { return causal && j > i ? KeyRule::Masked : KeyRule::Allowed; };
    AttentionResult result;
    std::unique_ptr<DenseRecord> dense = options.dense ? std::make_unique<DenseRecord>(T) : nullptr;
    attention.pass(state, dense.get(), int64_t(windows.size()), block, rule);
    BlockAttention::complete(state, dense.get(), result);
    return result;
}

SwinParams swinParamsAtLayer(SwinParams params, int layer)
{
    if (layer % 2 == 0)
        params.shift = 0;
    return params;
}

} // namespace atlas::attention
