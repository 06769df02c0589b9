#pragma once

#include "model/modelconfig.h"
#include "train/task.h"

#include <memory>
#include <string>

namespace atlas {

// The shape of a task's model reading bytes: layers × heads of width dModel, a feed-forward 4 × dModel wide.
ModelConfig byteTaskConfig(int layers, int heads, int dModel, int context);

// The tasks drawn from the shipped novel (train/corpus.h): chars, words, mlm and typos; `context` as Task::create's.
// nullptr for any other name.
std::unique_ptr<Task> createCorpusTask(const std::string &name, int context);

} // namespace atlas
