#include "views/patternparams.h"

#include <QtGlobal>

#include <algorithm>
#include <cmath>
#include <set>

namespace atlas {

const std::vector<PatternParamInfo> &patternParamInfo()
{
    static const std::vector<PatternParamInfo> table = {
        {"window", QT_TRANSLATE_NOOP("PatternEditorView", "Window w"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "Longformer: each query attends the w/2 keys on each side of it "
                "(causal: the w keys before it), stepping by the dilation")},
        {"dilation", QT_TRANSLATE_NOOP("PatternEditorView", "Dilation δ"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "Longformer: the window takes every δ-th key (i ± δ, i ± 2δ …), so "
                "the same number of keys reaches δ times further")},
        {"block", QT_TRANSLATE_NOOP("PatternEditorView", "Block size"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "BigBird: positions per block; the pattern is made of whole "
                "(query block × key block) squares")},
        {"window_blocks", QT_TRANSLATE_NOOP("PatternEditorView", "Window blocks"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "BigBird: a query block attends its own block and (n − 1)/2 blocks "
                "on each side (n is odd)")},
        {"global_blocks", QT_TRANSLATE_NOOP("PatternEditorView", "Global blocks"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "BigBird: the first blocks attend every key, and every query "
                "attends them")},
        {"random_blocks", QT_TRANSLATE_NOOP("PatternEditorView", "Random blocks"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "BigBird: extra key blocks for each query block, drawn at random "
                "(from the seed) among the blocks not already attended")},
        {"seed", QT_TRANSLATE_NOOP("PatternEditorView", "Random seed"),
            QT_TRANSLATE_NOOP("PatternEditorView", "BigBird: the seed the random blocks are drawn from")},
        {"stride", QT_TRANSLATE_NOOP("PatternEditorView", "Stride l"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "Strided: the band |i − j| ≤ l plus every l-th key before and after; "
                "fixed: blocks of l positions. The paper takes l ≈ √T")},
        {"summary", QT_TRANSLATE_NOOP("PatternEditorView", "Summary c"),
            QT_TRANSLATE_NOOP("PatternEditorView",
                "Fixed: the last c positions of every l-block, which every query "
                "attends (they summarise their block)")},
    };
    return table;
}

std::vector<std::string> patternParamKeys(const std::string &kind)
{
    if (kind == "bigbird")
        return {"block", "window_blocks", "global_blocks", "random_blocks", "seed"};
    if (kind == "longformer")
        return {"window", "dilation"};
    if (kind == "fixed")
        return {"stride", "summary"};
    return {"stride"};
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
        return {1, 2 * blocks - 1};
    if (key == "global_blocks" || key == "random_blocks")
        return {0, blocks};
    if (key == "seed")
        return {0, 999};
    if (key == "summary")
        return {0, value("stride")};
    return {1, std::max(1, T)}; // stride
}

std::map<std::string, int> patternIntegerParams(const attention::AttentionKernelSpec &spec, std::vector<int> &globals)
{
    globals.clear();
    if (spec.kind == "bigbird") {
        const attention::BigBirdParams p = attention::bigBirdParams(spec);
        return {{"block", p.block}, {"window_blocks", p.windowBlocks}, {"global_blocks", p.globalBlocks},
            {"random_blocks", p.randomBlocks}, {"seed", int(std::min<uint64_t>(p.seed, 999))}};
    }
    if (spec.kind == "longformer") {
        const attention::LongformerParams p = attention::longformerParams(spec);
        const std::set<int> sorted(p.global.begin(), p.global.end());
        globals.assign(sorted.begin(), sorted.end());
        return {{"window", p.window}, {"dilation", p.dilation}};
    }
    if (spec.kind == "fixed") {
        const attention::FixedParams p = attention::fixedParams(spec);
        return {{"stride", p.stride}, {"summary", p.summary}};
    }
    return {{"stride", attention::stridedParams(spec).stride}};
}

attention::AttentionKernelSpec suggestedPatternSpec(const std::string &kind, int T)
{
    T = std::max(T, 1);
    const auto n = [](int v) { return std::to_string(v); };
    if (kind == "longformer") {
        const int window = std::clamp(2 * int(std::lround(T / 16.0)), 2, 512);
        return attention::parseAttentionKernelSpec(kind, {"window=" + n(window), "dilation=1", "global=0"});
    }
    if (kind == "bigbird") {
        int block = 1;
        while (block * 2 <= std::min(64, T / 16))
            block *= 2;
        const bool large = T >= 4096;
        return attention::parseAttentionKernelSpec(kind,
            {"block=" + n(block), "window_blocks=3", "global_blocks=" + n(large ? 2 : 1),
                "random_blocks=" + n(large ? 3 : 1), "seed=0"});
    }
    const int stride = std::max(1, int(std::lround(std::sqrt(double(T)))));
    if (kind == "fixed")
        return attention::parseAttentionKernelSpec(kind, {"stride=" + n(stride), "summary=1"});
    return attention::parseAttentionKernelSpec(kind, {"stride=" + n(stride)});
}

} // namespace atlas
