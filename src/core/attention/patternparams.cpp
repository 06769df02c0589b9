#include "attention/patternparams.h"

#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace atlas::attention {

namespace {
std::pair<int, int> sliderRange(const std::string &key, int T, const std::map<std::string, int> &v);
} // namespace

std::vector<std::string> patternParamKeys(const std::string &kind)
{
    std::vector<std::string> keys;
    for (const KernelParam &p : attentionKernel(kind).params)
        if (p.type == KernelParamType::Integer || p.type == KernelParamType::Seed)
            keys.push_back(p.key);
    return keys;
}

std::pair<int, int> patternParamRange(
    const std::string &kind, const std::string &key, int T, const std::map<std::string, int> &v)
{
    auto [lo, hi] = sliderRange(key, T, v);
    for (const KernelParam &p : attentionKernel(kind).params)
        if (p.key == key)
            lo = std::max(lo, p.minimum); // Swin's window is at least 1, Longformer's may be 0
    return {lo, std::max(lo, hi)};
}

namespace {

std::pair<int, int> sliderRange(const std::string &key, int T, const std::map<std::string, int> &v)
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
    if (key == "shift")
        return {0, std::max(0, value("window") - 1)};
    if (key == "grid")
        return {0, std::max(1, T)};
    return {1, std::max(1, T)}; // stride
}

} // namespace

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
    if (!attentionKernel(kind).fixedPattern)
        throw Error("attention pattern: kernel '" + kind + "' has no fixed pattern");
    return suggestedKernelSpec(kind, T);
}

AttentionKernelSpec slidingWindowPattern(int window)
{
    return parseAttentionKernelSpec(
        "longformer", {"window=" + std::to_string(std::max(window - 1, 0)), "dilation=1"}); // no global tokens
}

AttentionKernelSpec suggestedKernelSpec(const std::string &kind, int T)
{
    const AttentionKernelKind &kernel = attentionKernel(kind);
    return parseAttentionKernelSpec(
        kind, kernel.suggest ? kernel.suggest(std::max(T, 1)) : std::vector<std::string> {});
}

} // namespace atlas::attention
