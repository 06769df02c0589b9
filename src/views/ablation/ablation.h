#pragma once

#include "analysis/headimportance.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// The ablation view: the spec's heads switched off, against the whole model.
struct HeadAblationAnalysis : ViewAnalysis
{
    static constexpr int kMaxTokens = 2048; // two forward passes of the input, and mean ablation's references
    static constexpr int kExamples = 128; // held-out examples scored per run (the importance table: L·H + 1 runs)
    std::string model; // the name of the model that ran
    std::vector<HeadRef> heads; // the heads switched off, as the spec gave them (none: the whole model twice)
    std::string mode; // zero | mean
    int position = 0; // where the next token is read
    AblationComparison comparison;
    std::shared_ptr<const HeadImportance> importance; // null for a model without a task
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::ablation {

inline const OwnKey<std::string> kAblateHeads {"ablate_heads", ""};
inline const OwnKey<std::string> kAblation {"ablation", "zero"};

} // namespace atlas::views::ablation
