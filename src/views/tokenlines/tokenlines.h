#pragma once

#include "view/viewspec.h"

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::tokenlines {

inline const OwnKey<std::vector<int>> kHiddenHeads {"hidden_heads", {}};

} // namespace atlas::views::tokenlines
