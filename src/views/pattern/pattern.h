#pragma once

#include "attention/attentionpattern.h"
#include "view/viewanalysis.h"

namespace atlas {

struct PatternAnalysis : ViewAnalysis
{
    static constexpr int kExactCells = 512; // up to this many tokens every cell is one (query, key)
    static constexpr int kGridCells = 512; // above it, a (512,512) grid of blocks
    attention::AttentionKernelSpec spec; // the pattern drawn: the spec's kernel, or a suggestion for T
    // the spec runs another kernel: spec is the layer's own sliding window (ownWindow > 0: W), or else
    // suggestedPatternSpec("longformer", T)
    bool suggested = false;
    int ownWindow = 0;
    attention::PatternSummary summary;
    std::string formula; // patternFormula(spec, causal)
};

} // namespace atlas
