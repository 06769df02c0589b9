#pragma once

#include "analysis/earlyexit.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

struct EarlyExitAnalysis : ViewAnalysis
{
    EarlyExit exit;
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::earlyexit {

inline const OwnKey<std::string> kExitRule {"exit_rule", "confidence"};
inline const OwnKey<double> kExitThreshold {"exit_threshold", 0.9};
inline const OwnKey<int> kExitPatience {"exit_patience", 2};

} // namespace atlas::views::earlyexit
