#pragma once

#include <QImage>

namespace atlas {

class ColorLut;

// One head's [rows, cols] attention probabilities as a small picture, pooled to at most kHeadThumbnailPixels cells a
// side and scaled to its own maximum; cells −∞ in `masked` (when given) in the lookup table's masked colour, never as
// a probability of 0. The All heads grid and the Head kinds gallery draw heads with it.
constexpr int kHeadThumbnailPixels = 96;
QImage headThumbnail(const float *probs, const float *masked, int rows, int cols, const ColorLut &lut, bool log);

} // namespace atlas
