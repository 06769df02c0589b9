#pragma once

#include "view/viewspec.h"

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::attentionmap {

inline const OwnKey<bool> kVeilQuery {"veil_query", false};

} // namespace atlas::views::attentionmap
