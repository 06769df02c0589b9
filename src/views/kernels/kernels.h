#pragma once

#include "attention/kernelcomparison.h"
#include "view/viewanalysis.h"

namespace atlas {

struct KernelComparisonAnalysis : ViewAnalysis
{
    static constexpr int kMaxTokens = 512; // every kernel runs dense: T × T weights each
    int layer = 0, head = 0;
    std::vector<attention::KernelComparisonEntry> entries;
};

} // namespace atlas
