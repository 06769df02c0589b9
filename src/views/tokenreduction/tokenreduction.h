#pragma once

#include "analysis/tokenreduction.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// Token reduction (analysis/tokenreduction.h): the input run with the spec's schedule, and the held-out sweep of
// the spec's model and of `baseline_model` when given (each computed once per model and reused).
struct TokenReductionAnalysis : ViewAnalysis
{
    static constexpr int kExamples = 64; // held-out examples per rate and ranking
    TokenSurvival survival;
    std::vector<std::shared_ptr<const ReductionSweep>> sweeps; // the spec's model first
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::tokenreduction {

inline const OwnKey<std::string> kRetention {"retention", "0.7"};
inline const OwnKey<std::string> kRanking {"ranking", "significance"};

} // namespace atlas::views::tokenreduction
