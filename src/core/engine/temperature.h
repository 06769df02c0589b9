#pragma once

#include <cstddef>
#include <vector>

namespace atlas {

// A distribution at temperature t: softmax(z / t) from p = softmax(z), computed as p^(1/t) / Σ p^(1/t) in double
// (t < 1 sharpens, t > 1 flattens, t = 1 returns p). What sampling with that temperature draws from. Throws
// atlas::Error unless t > 0 and finite.
std::vector<double> atTemperature(const float *probabilities, int size, double temperature);

// Nucleus (top-p) sampling's cut (Holtzman et al. 2020), as Hugging Face's TopPLogitsWarper makes it: given weights
// sorted from the largest (any positive scale: they are normalised by their sum here), how many of the first to keep,
// the fewest whose share of the sum reaches `topP`, at least one. topP ≥ 1 keeps every weight. Sampling then draws
// among the kept ones in proportion to their weights. The generator and the Next token view both cut here. Throws
// atlas::Error unless 0 < topP.
size_t nucleusSize(const double *sortedWeights, size_t size, double topP);

} // namespace atlas
