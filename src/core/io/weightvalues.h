#pragma once

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

inline float bf16ToFloat(uint16_t b)
{
    return std::bit_cast<float>(uint32_t(b) << 16);
}

// Whether every value is a number: the exponent bits of NaN and of ±infinity are all ones. Vectorises, so checking a
// checkpoint as it is read costs little beside the copy (docs/reliability.md).
bool allFinite(const float *values, int64_t n);

// "holds 3 values that are not finite numbers, the first element 17, NaN: …", for a tensor allFinite refused.
std::string nonFiniteReason(const float *values, int64_t n);

} // namespace atlas
