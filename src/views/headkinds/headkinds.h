#pragma once

#include "analysis/headclasses.h"
#include "view/viewanalysis.h"
#include "view/viewspec.h"

namespace atlas {

// Every head's kind scores on the repeated random sequence, with its attention there (analysis/headclasses.h).
struct HeadKindsAnalysis : ViewAnalysis
{
    static constexpr int kHalf = 32; // tokens in each half of the sequence (fewer when the context is shorter)
    HeadClasses classes;
    bool fromInput = false; // the input's tokens twice, not random ones
};

} // namespace atlas

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::headkinds {

inline const OwnKey<std::string> kHeadKind {"head_kind", "induction"};
inline const OwnKey<double> kMinScore {"min_score", 0.0};
inline const OwnKey<std::string> kHeadSequence {"head_sequence", "random"};

} // namespace atlas::views::headkinds
