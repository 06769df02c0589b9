#pragma once

#include "analysis/headpatterns.h"
#include "model/builtinmodels.h"
#include "train/task.h"

#include <string>
#include <vector>

namespace atlas::testing {

// A built-in model's attention mass on its task's pattern `patternName` (analysis/headpatterns.h), per layer and head,
// over 100 held-out examples of the task its config names (atlas_task); empty when the task has no such pattern.
inline std::vector<std::vector<double>> builtinPatternMass(const char *model, const char *patternName)
{
    const std::string task = loadModel(model)->config.task;
    for (const HeadPattern &p : headPatterns(task))
        if (p.name == patternName)
            return patternMass(loadModel(model), *Task::create(task), p, 100);
    return {};
}

} // namespace atlas::testing
