#pragma once

#include "analysis/logitattribution.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// Direct logit attribution at one position (analysis/logitattribution.h).
struct LogitAttributionAnalysis : ViewAnalysis
{
    LogitAttribution parts;
};

} // namespace atlas

// This view's own spec key (documented by its descriptor's `keys`).
namespace atlas::views::logitattribution {

inline const OwnKey<std::string> kAgainst {"against", ""};

} // namespace atlas::views::logitattribution
