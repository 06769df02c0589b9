#pragma once

#include <utility>
#include <vector>

namespace atlas {

// The k largest entries of row[0 … size) as (index, value), largest first; ties keep the lower index first. The
// next-token bars, the masked fills and `dump` read a distribution's most probable tokens with it.
std::vector<std::pair<int, float>> mostProbable(const float *row, int size, int k);

} // namespace atlas
