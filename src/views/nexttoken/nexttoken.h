#pragma once

#include "view/viewspec.h"

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::nexttoken {

inline const OwnKey<double> kTemperature {"temperature", 1.0};
inline const OwnKey<double> kTopP {"top_p", 1.0};

} // namespace atlas::views::nexttoken
