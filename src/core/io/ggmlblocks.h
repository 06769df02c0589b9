#pragma once

// Internal to io/: how ggml's blocks store their parts, for its decoders (io/ggmltypes.cpp) and its encoders
// (io/ggmlencoders.cpp), which reads back the scales it packed.

#include "io/weightvalues.h"

#include <array>
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

// Q3_K's sixteen signed 6-bit scales, packed in 12 bytes: scale i's low 4 bits, then its high 2.
inline int q3kScale(const unsigned char *packed, int i)
{
    const int low = i < 8 ? packed[i] & 0x0F : packed[i - 8] >> 4;
    const int high = (packed[8 + i % 4] >> (2 * (i / 4))) & 3;
    return int8_t(low | high << 4) - 32;
}

// IQ4_XS's eight signed 6-bit scales of a block: their low 4 bits in bytes 4–7, their high 2 in the 16 bits at 2.
inline int iq4xsScale(const unsigned char *b, int j)
{
    const int low = (b[4 + j / 2] >> (4 * (j % 2))) & 0x0F, high = (u16(b + 2) >> (2 * j)) & 3;
    return int8_t(low | high << 4) - 32;
}

// IQ4_NL's and IQ4_XS's 16 levels (ggml's kvalues_iq4nl).
constexpr std::array<int8_t, 16> kIq4Levels
    = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

} // namespace atlas::ggml
