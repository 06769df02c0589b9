#pragma once

#include "view/viewspec.h"

// This view's own spec keys (documented by its descriptor's `keys`).
namespace atlas::views::neuron {

inline const OwnKey<int> kKey {"key", -1};

} // namespace atlas::views::neuron
