#pragma once

#include "model/model.h"
#include "train/task.h"

#include <cstdint>
#include <memory>

namespace atlas {

struct Evaluation
{
    float loss = 0; // mean cross-entropy on held-out examples
    float tokenAccuracy = 0; // fraction of target tokens predicted (argmax) correctly
    float exactMatch = 0; // fraction of examples with every target right
};

// Scores a model on `examples` held-out examples of a task (drawn from `seed`), both cores working.
Evaluation evaluateOnTask(std::shared_ptr<const Model> model, const Task &task, int examples, uint64_t seed = 12345);

} // namespace atlas
