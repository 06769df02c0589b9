#pragma once

#include "view/viewspec.h"

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::heads {

inline const OwnKey<int> kThumbnailSize {"thumbnail_size", 0}; // 0: fit the view
inline constexpr int kMinThumbnail = 48, kMaxThumbnail = 1024; // pixels a side, when not 0

} // namespace atlas::views::heads
