#include "views/headthumbnail.h"

#include "views/colormaps.h"
#include "views/downsample.h"

#include <algorithm>
#include <cmath>

namespace atlas {

QImage headThumbnail(const float *probs, const float *masked, int rows, int cols, const ColorLut &lut, bool log)
{
    const Pooled p = downsample(probs, rows, cols, kHeadThumbnailPixels, kHeadThumbnailPixels, masked);
    QImage image(p.cols, p.rows, QImage::Format_RGB32);
    const ColorScale scale(log, p.maxFinite, std::min(p.minPositive, p.maxFinite));
    for (int r = 0; r < p.rows; ++r) {
        auto *line = reinterpret_cast<QRgb *>(image.scanLine(r));
        for (int c = 0; c < p.cols; ++c) {
            const float v = p.at(r, c);
            line[c] = std::isinf(v) && v < 0 ? lut.masked() : lut.map(scale.place(v));
        }
    }
    return image;
}

} // namespace atlas
