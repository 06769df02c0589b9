#pragma once

#include "adaptivespan/adaptivespans.h"
#include "view/viewanalysis.h"

namespace atlas {

// The Span view's analysis: every head's learned span on this input (adaptivespan/adaptivespans.h).
struct AdaptiveSpanAnalysis : ViewAnalysis
{
    AdaptiveSpans spans;
};

} // namespace atlas
