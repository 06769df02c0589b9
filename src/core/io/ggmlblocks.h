#pragma once

// Internal to io/: how ggml's blocks store their parts, for its decoders (io/ggmltypes.cpp) and its encoders
// (io/ggmlencoders.cpp), which reads back the scales it packed.

#include "io/weightvalues.h"

#include <cstdint>

namespace atlas::ggml {

constexpr int64_t kQkK = 256; // a K-quant's super-block

// A little-endian 16-bit field.
inline uint16_t u16(const unsigned char *p)
{
    return uint16_t(p[0] | (p[1] << 8));
}

// A block's half-precision scale.
inline float half(const unsigned char *p)
{
    return halfToFloat(u16(p));
}

// Q4_K's and Q5_K's eight 6-bit scales and minimums, packed in 12 bytes.
inline void scaleAndMin(const unsigned char *s, int j, int &scale, int &min)
{
    if (j < 4) {
        scale = s[j] & 0x3F;
        min = s[j + 4] & 0x3F;
    } else {
        scale = (s[j + 4] & 0x0F) | ((s[j - 4] >> 2) & 0x30);
        min = (s[j + 4] >> 4) | ((s[j] >> 2) & 0x30);
    }
}

} // namespace atlas::ggml
