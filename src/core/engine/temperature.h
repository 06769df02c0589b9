#pragma once

#include <vector>

namespace atlas {

// A distribution at temperature t: softmax(z / t) from p = softmax(z), computed as p^(1/t) / Σ p^(1/t) in double
// (t < 1 sharpens, t > 1 flattens, t = 1 returns p). What sampling with that temperature draws from. Throws
// atlas::Error unless t > 0 and finite.
std::vector<double> atTemperature(const float *probabilities, int size, double temperature);

} // namespace atlas
