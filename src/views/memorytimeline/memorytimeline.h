#pragma once

#include "view/viewspec.h"

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::memorytimeline {

inline const OwnKey<std::string> kMemoryScope {"memory_scope", "all"};

} // namespace atlas::views::memorytimeline
