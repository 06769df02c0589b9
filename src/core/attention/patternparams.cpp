#include "attention/patternparams.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace atlas::attention {

std::vector<std::string> patternParamKeys(const std::string &kind)
{
    std::vector<std::string> keys;
    for (const KernelParam &p : attentionKernel(kind).params)
        if (p.type == KernelParamType::Integer || p.type == KernelParamType::Seed)
            keys.push_back(p.key);
    return keys;
}

std::pair<int, int> patternParamRange(const std::string &key, int T, const std::map<std::string, int> &v)
{
    const auto value = [&v](const char *k) { return v.count(k) ? v.at(k) : 1; };
    const int blocks = std::max(1, (T + std::max(1, value("block")) - 1) / std::max(1, value("block")));
    if (key == "window")
        return {0, 2 * T};
    if (key == "dilation")
        return {1, std::max(1, std::min(T, 64))};
    if (key == "block")
        return {1, std::max(1, std::min(T, 512))};
    if (key == "window_blocks")
        return {0, 2 * blocks - 1};
    if (key == "global_blocks" || key == "random_blocks")
        return {0, blocks};
    if (key == "seed")
        return {0, 999};
    if (key == "summary")
        return {0, value("stride")};
    return {1, std::max(1, T)}; // stride
}

std::map<std::string, int> patternIntegerParams(const AttentionKernelSpec &spec, std::vector<int> &globals)
{
    validateAttentionKernelSpec(spec);
    globals.clear();
    std::map<std::string, int> values;
    for (const KernelParam &p : attentionKernel(spec.kind).params) {
        if (p.type == KernelParamType::Integer)
            values[p.key] = kernelInteger(spec, p.key);
        else if (p.type == KernelParamType::Seed)
            values[p.key] = int(std::min<uint64_t>(kernelSeed(spec), 999));
        else if (p.type == KernelParamType::Positions) {
            const std::vector<int> positions = kernelPositions(spec, p.key);
            const std::set<int> sorted(positions.begin(), positions.end());
            globals.assign(sorted.begin(), sorted.end());
        }
    }
    return values;
}

AttentionKernelSpec suggestedPatternSpec(const std::string &kind, int T)
{
    T = std::max(T, 1);
    const auto n = [](int v) { return std::to_string(v); };
    if (kind == "longformer") {
        const int window = std::clamp(2 * int(std::lround(T / 16.0)), 2, 512);
        return parseAttentionKernelSpec(kind, {"window=" + n(window), "dilation=1", "global=0"});
    }
    if (kind == "bigbird") {
        int block = 1;
        while (block * 2 <= std::min(64, T / 16))
            block *= 2;
        const bool large = T >= 4096;
        return parseAttentionKernelSpec(kind,
            {"block=" + n(block), "window_blocks=3", "global_blocks=" + n(large ? 2 : 1),
                "random_blocks=" + n(large ? 3 : 1), "seed=0"});
    }
    const int stride = std::max(1, int(std::lround(std::sqrt(double(T)))));
    if (kind == "fixed")
        return parseAttentionKernelSpec(kind, {"stride=" + n(stride), "summary=1"});
    return parseAttentionKernelSpec(kind, {"stride=" + n(stride)});
}

AttentionKernelSpec suggestedKernelSpec(const std::string &kind, int T)
{
    T = std::max(T, 1);
    const auto n = [](int v) { return std::to_string(v); };
    if (attentionKernel(kind).fixedPattern)
        return suggestedPatternSpec(kind, T);
    if (kind == "lsh") {
        int buckets = 2;
        while (buckets * 2 <= std::min(64, T / 8))
            buckets *= 2;
        const int chunk = std::clamp((T + buckets - 1) / buckets, 2, 64);
        return parseAttentionKernelSpec(kind, {"rounds=2", "buckets=" + n(buckets), "chunk=" + n(chunk)});
    }
    if (kind == "linformer")
        return parseAttentionKernelSpec(kind, {"k=" + n(std::clamp(T / 4, 1, 256))});
    if (kind == "performer")
        return parseAttentionKernelSpec(kind, {"features=" + n(T >= 1024 ? 256 : 64)});
    return parseAttentionKernelSpec(kind, {});
}

} // namespace atlas::attention
