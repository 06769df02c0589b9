#pragma once

#include "train/task.h"

#include <memory>
#include <string>

namespace atlas {

// The tasks drawn from the shipped novel (train/corpus.h): chars, words, mlm and typos; `context` as Task::create's.
// nullptr for any other name.
std::unique_ptr<Task> createCorpusTask(const std::string &name, int context);

} // namespace atlas
