#pragma once

#include "view/viewanalysis.h"

#include <string>

// The memory views' analyses (memory-timeline, memory-graph, memory-depth, memory-tradeoff, inversion-error): each
// trains real steps of a model, so each runs off the GUI thread and is keyed on what it depends on.
namespace atlas {

bool isMemoryView(const std::string &view);
AnalysisRequest memoryRequest(const ViewSpec &spec, const AnalysisContext &context);

} // namespace atlas
