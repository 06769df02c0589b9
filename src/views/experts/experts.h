#pragma once

#include "analysis/expertrouting.h"
#include "view/viewanalysis.h"

namespace atlas {

struct ExpertsAnalysis : ViewAnalysis
{
    static constexpr int kMaxTokens = 4096; // the view routes the input through the whole model again
    ExpertRouting routing;
};

} // namespace atlas
