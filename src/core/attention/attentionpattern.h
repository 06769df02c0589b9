#pragma once

#include "attention/attentionkernel.h"

#include <cstdint>
#include <string>
#include <vector>

// The pattern of a fixed sparse kernel (bigbird, longformer, strided, fixed) without computing attention: the
// kernel runs on dummy (T,1) inputs with a PatternVisitor that records each block's (queries × keys) and rules,
// so the pattern is the kernel's own, never a second copy of its logic. Memory is O(allowed pairs / run length
// + T + cells²), never T×T. LSH is left out: its pattern depends on the queries (see lshattention.h).
namespace atlas::attention {

struct PatternSummary
{
    int64_t length = 0; // T
    int64_t allowedPairs = 0; // distinct (i, j) some block lets query i attend (padding and causal applied)
    int64_t computedPairs = 0; // Σ |queries|·|keys| over the blocks: the scores the kernel really computes,
                               // masked cells inside its blocks included
    int64_t fullPairs = 0; // what full attention computes: T², or T(T+1)/2 when causal
    int cells = 0; // g = min(gridCells, T): the grid is (g,g)
    std::vector<int64_t> cellEdges; // (g+1): cell c covers positions [cellEdges[c], cellEdges[c+1])
    std::vector<int64_t> cellAllowed; // (g,g) row-major: allowed pairs in each cell
    std::vector<float> density; // (g,g): cellAllowed over the cell's area; with g = T exactly the 0/1 mask

    double allowedFraction() const { return fullPairs ? double(allowedPairs) / double(fullPairs) : 0.0; }
    // Multiply-adds of the scores and of the weighted values: 2·dHead per computed pair.
    int64_t operations(int64_t dHead) const { return computedPairs * 2 * dHead; }
    int64_t fullOperations(int64_t dHead) const { return fullPairs * 2 * dHead; }
    // The cell holding position t.
    int cellOf(int64_t t) const;
    // Whether (i, j) is allowed when every cell is one position (cells == length); otherwise whether its cell
    // holds any allowed pair.
    bool allowed(int64_t i, int64_t j) const;
};

// Whether attentionPattern can draw the kind: bigbird, longformer, strided, fixed.
bool hasFixedPattern(const std::string &kind);

// The pattern of spec's kernel over T positions, causal or not, with padding keys masked, summarised on a grid of
// at most gridCells × gridCells cells (gridCells >= T gives the exact mask). Throws atlas::Error for a kind
// without a fixed pattern, a bad spec, T < 1, gridCells < 1 or padding outside [0, T).
PatternSummary attentionPattern(
    const AttentionKernelSpec &spec, int64_t T, bool causal, const std::vector<int> &padding, int gridCells);

// One line for a lecture slide: which keys query i attends, with the spec's numbers, e.g.
// "j ∈ G  or  i ∈ G  or  j = i + 2m with |m| ≤ 4   (G = {0, 5})". Throws atlas::Error like attentionPattern.
std::string patternFormula(const AttentionKernelSpec &spec, bool causal);

// The fixed patterns' rules (AttentionKernelKind::rule), each with the kernel's numbers.
std::string bigBirdRule(const BigBirdParams &p);
std::string longformerRule(const LongformerParams &p, bool causal);
std::string fixedRule(const FixedParams &p);

} // namespace atlas::attention
