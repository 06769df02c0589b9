#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <string>

// Decoding and checking the values of a model file's weights, for every reader (safetensors, GGUF).
namespace atlas {

// IEEE binary16 to float32, exactly: subnormals, infinities and NaN payloads included.
inline float halfToFloat(uint16_t h)
{
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1Fu;
    const uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0) {
        // Zero or subnormal: mantissa * 2^-24 is exact in float32.
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 0x1F) // infinity, or NaN with its payload kept
        return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

// float32 to IEEE binary16, rounded to nearest even as ggml's GGML_FP32_TO_FP16 and numpy's astype(float16) round:
// past 65504 to infinity, below 2⁻¹⁴ to a subnormal, a NaN to the quiet NaN 0x7E00.
inline uint16_t floatToHalf(float f)
{
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const auto sign = uint16_t((x >> 16) & 0x8000u);
    const uint32_t magnitude = x & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u)
        return uint16_t(sign | 0x7E00u);
    if (magnitude >= 0x477FF000u) // 65520 and up round to infinity
        return uint16_t(sign | 0x7C00u);
    if (magnitude < 0x38800000u) { // below 2⁻¹⁴: a multiple of 2⁻²⁴, rounded half to even by the integer conversion
        const float units = std::bit_cast<float>(magnitude) * 0x1p24f;
        auto whole = uint32_t(units);
        const float rest = units - float(whole);
        if (rest > 0.5f || (rest == 0.5f && (whole & 1u)))
            ++whole;
        return uint16_t(sign | whole);
    }
    uint32_t h = (magnitude - 0x38000000u) >> 13; // the exponent rebiased from 127 to 15, the top 10 mantissa bits
    const uint32_t rest = magnitude & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        ++h;
    return uint16_t(sign | h);
}

inline float bf16ToFloat(uint16_t b)
{
    return std::bit_cast<float>(uint32_t(b) << 16);
}

// MXFP4 (the OCP microscaling format: 32 four-bit E2M1 codes sharing one E8M0 power-of-two scale), decoded as ggml
// decodes it: the code's value doubled (kvalues_mxfp4), times the scale 2^(e − 127) halved (ggml_e8m0_to_fp32_half).
// The product is exact, and equals Hugging Face's FP4_VALUES[code] · 2^(e − 127).
constexpr std::array<int8_t, 16> kMxfp4DoubledLevels = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

inline float mxfp4HalfScale(unsigned char e)
{
    const uint32_t bits = e < 2 ? uint32_t(0x00200000) << e : uint32_t(e - 1) << 23;
    return std::bit_cast<float>(bits);
}

// The E2M1 values as transformers' FP4_VALUES holds them, for its decoding of safetensors blocks: the same as ggml's
// but for code 8, −0 where ggml gives +0.
constexpr std::array<float, 16> kMxfp4Values
    = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// Whether every value is a number: the exponent bits of NaN and of ±infinity are all ones. Vectorises, so checking a
// checkpoint as it is read costs little beside the copy (docs/reliability.md).
bool allFinite(const float *values, int64_t n);

// "holds 3 values that are not finite numbers, the first element 17, NaN: …", for a tensor allFinite refused.
std::string nonFiniteReason(const float *values, int64_t n);

} // namespace atlas
