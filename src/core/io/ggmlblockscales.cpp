#include "io/ggmlblocks.h"
#include "io/ggmltypes.h"

// What a block holds besides its levels, for the Quantization view: apart from the decoders (io/ggmldecoders.h), which
// compute the same scales again for every block of a product.
namespace atlas {

using ggml::half;
using ggml::kIq4Levels;
using ggml::scaleAndMin;

GgmlBlockScales ggmlBlockScales(GgmlType type, const unsigned char *b)
{
    GgmlBlockScales s;
    const auto levels = [&](int lowest, int highest) {
        s.lowest = lowest;
        s.highest = highest;
    };
    const auto one = [&](const char *formula, float d, bool hasMin, size_t minAt) {
        s.formula = formula;
        s.subBlock = 32;
        s.scales = {d};
        if (hasMin)
            s.mins = {-half(b + minAt)}; // stored as the offset added; shown as the minimum subtracted
    };
    switch (type) {
    case GgmlType::Q4_0:
        one("w = d \u00B7 (q \u2212 8), q = 0 \u2026 15", half(b), false, 0);
        levels(-8, 7);
        break;
    case GgmlType::Q4_1:
        one("w = d \u00B7 q \u2212 m, q = 0 \u2026 15", half(b), true, 2);
        levels(0, 15);
        break;
    case GgmlType::Q5_0:
        one("w = d \u00B7 (q \u2212 16), q = 0 \u2026 31", half(b), false, 0);
        levels(-16, 15);
        break;
    case GgmlType::Q5_1:
        one("w = d \u00B7 q \u2212 m, q = 0 \u2026 31", half(b), true, 2);
        levels(0, 31);
        break;
    case GgmlType::Q8_0:
        one("w = d \u00B7 q, q = \u2212128 \u2026 127 (ggml's quantizer writes \u2212127 \u2026 127)", half(b), false,
            0);
        levels(-128, 127);
        break;
    case GgmlType::IQ4_NL:
        one("w = d \u00B7 level[q], 16 levels from \u2212127 to 113, q = 0 \u2026 15", half(b), false, 0);
        s.levelTable.assign(kIq4Levels.begin(), kIq4Levels.end());
        break;
    case GgmlType::IQ4_XS: {
        s.formula = "w = d\u2C7C \u00B7 level[q], 16 levels from \u2212127 to 113, q = 0 \u2026 15, sub-block j of 32";
        s.subBlock = 32;
        s.levelTable.assign(kIq4Levels.begin(), kIq4Levels.end());
        for (int j = 0; j < 8; ++j)
            s.scales.push_back(half(b) * float(ggml::iq4xsScale(b, j)));
        break;
    }
    case GgmlType::MXFP4:
        // ggml multiplies half the scale by twice the E2M1 value; the same product, shown as the format defines it
        one("w = s \u00B7 v[q], s = 2^(e \u2212 127), v[q] an E2M1 value: 0, \u00B10.5, \u00B11 \u2026 \u00B16",
            2 * mxfp4HalfScale(b[0]), false, 0);
        s.levelTable.assign(kMxfp4Values.begin(), kMxfp4Values.end());
        break;
    case GgmlType::Q2_K: // 16 sub-blocks of 16: a 4-bit scale and a 4-bit minimum each, times d and dmin
        s.formula = "w = d\u2C7C \u00B7 q \u2212 m\u2C7C, q = 0 \u2026 3, sub-block j of 16";
        s.subBlock = 16;
        levels(0, 3);
        for (int j = 0; j < 16; ++j) {
            s.scales.push_back(half(b + 80) * float(b[j] & 0x0F));
            s.mins.push_back(half(b + 82) * float(b[j] >> 4));
        }
        break;
    case GgmlType::Q3_K: // 16 sub-blocks of 16: a signed 6-bit scale each (its low 4 bits, then its high 2), times d
        s.formula = "w = d\u2C7C \u00B7 (q \u2212 4), q = 0 \u2026 7, sub-block j of 16";
        s.subBlock = 16;
        levels(-4, 3);
        for (int j = 0; j < 16; ++j)
            s.scales.push_back(half(b + 108) * float(ggml::q3kScale(b + 96, j)));
        break;
    case GgmlType::Q4_K:
    case GgmlType::Q5_K: {
        s.formula = type == GgmlType::Q4_K ? "w = d\u2C7C \u00B7 q \u2212 m\u2C7C, q = 0 \u2026 15, sub-block j of 32"
                                           : "w = d\u2C7C \u00B7 q \u2212 m\u2C7C, q = 0 \u2026 31, sub-block j of 32";
        s.subBlock = 32;
        levels(0, type == GgmlType::Q4_K ? 15 : 31);
        for (int j = 0; j < 8; ++j) {
            int scale, min;
            scaleAndMin(b + 4, j, scale, min);
            s.scales.push_back(half(b) * float(scale));
            s.mins.push_back(half(b + 2) * float(min));
        }
        break;
    }
    case GgmlType::Q6_K: {
        s.formula = "w = d\u2C7C \u00B7 (q \u2212 32), q = 0 \u2026 63, sub-block j of 16";
        s.subBlock = 16;
        levels(-32, 31);
        const auto *scales = reinterpret_cast<const int8_t *>(b + 192);
        for (int j = 0; j < 16; ++j)
            s.scales.push_back(half(b + 208) * float(scales[j]));
        break;
    }
    default:
        break;
    }
    return s;
}

} // namespace atlas
