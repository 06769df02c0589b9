#include "io/ggmltypes.h"

#include "io/ggmldecoders.h"
#include "io/ggmlencoders.h"
#include "io/weightvalues.h"
#include "util/error.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>

// Compiled with -ffp-contract=off (src/core/CMakeLists.txt), as the block decoders it inlines need.
namespace atlas {

namespace {

using namespace ggml;

struct NumberedType
{
    uint32_t id;
    GgmlTypeInfo info;
};

// ggml.h's ggml_type and gguf-py's GGML_QUANT_SIZES.
constexpr std::array kTypes = {
    NumberedType {0, {"F32", 1, 4, f32, encodeF32}},
    NumberedType {1, {"F16", 1, 2, f16, encodeF16}},
    NumberedType {2, {"Q4_0", 32, 18, q4_0, encodeQ4_0}},
    NumberedType {3, {"Q4_1", 32, 20, q4_1}},
    NumberedType {6, {"Q5_0", 32, 22, q5_0}},
    NumberedType {7, {"Q5_1", 32, 24, q5_1}},
    NumberedType {8, {"Q8_0", 32, 34, q8_0, encodeQ8_0}},
    NumberedType {9, {"Q8_1", 32, 36, nullptr}},
    NumberedType {10, {"Q2_K", 256, 84, q2_k}},
    NumberedType {11, {"Q3_K", 256, 110, q3_k}},
    NumberedType {12, {"Q4_K", 256, 144, q4_k, encodeQ4_K}},
    NumberedType {13, {"Q5_K", 256, 176, q5_k}},
    NumberedType {14, {"Q6_K", 256, 210, q6_k}},
    NumberedType {15, {"Q8_K", 256, 292, nullptr}},
    NumberedType {16, {"IQ2_XXS", 256, 66, nullptr}},
    NumberedType {17, {"IQ2_XS", 256, 74, nullptr}},
    NumberedType {18, {"IQ3_XXS", 256, 98, nullptr}},
    NumberedType {19, {"IQ1_S", 256, 50, nullptr}},
    NumberedType {20, {"IQ4_NL", 32, 18, iq4_nl}},
    NumberedType {21, {"IQ3_S", 256, 110, nullptr}},
    NumberedType {22, {"IQ2_S", 256, 82, nullptr}},
    NumberedType {23, {"IQ4_XS", 256, 136, iq4_xs}},
    NumberedType {24, {"I8", 1, 1, nullptr}},
    NumberedType {25, {"I16", 1, 2, nullptr}},
    NumberedType {26, {"I32", 1, 4, nullptr}},
    NumberedType {27, {"I64", 1, 8, nullptr}},
    NumberedType {28, {"F64", 1, 8, nullptr}},
    NumberedType {29, {"IQ1_M", 256, 56, nullptr}},
    NumberedType {30, {"BF16", 1, 2, bf16}},
    NumberedType {34, {"TQ1_0", 256, 54, nullptr}},
    NumberedType {35, {"TQ2_0", 256, 66, nullptr}},
    NumberedType {39, {"MXFP4", 32, 17, mxfp4}},
    NumberedType {40, {"NVFP4", 64, 36, nullptr}},
    NumberedType {41, {"Q1_0", 128, 18, nullptr}},
    NumberedType {42, {"Q2_0", 64, 18, nullptr}},
};

} // namespace

const GgmlTypeInfo *ggmlTypeInfo(uint32_t id)
{
    for (const NumberedType &t : kTypes)
        if (t.id == id)
            return &t.info;
    return nullptr;
}

const GgmlTypeInfo &ggmlTypeInfo(GgmlType type)
{
    return *ggmlTypeInfo(uint32_t(type));
}

namespace {

std::string typeNames(bool (GgmlTypeInfo::*has)() const)
{
    std::string names;
    for (const NumberedType &t : kTypes)
        if ((t.info.*has)())
            names += (names.empty() ? "" : ", ") + std::string(t.info.name);
    return names;
}

} // namespace

std::string readGgmlTypeNames()
{
    return typeNames(&GgmlTypeInfo::read);
}

std::string writtenGgmlTypeNames()
{
    return typeNames(&GgmlTypeInfo::written);
}

const GgmlTypeInfo *ggmlTypeNamed(const std::string &name, GgmlType *type)
{
    for (const NumberedType &t : kTypes)
        if (std::equal(name.begin(), name.end(), t.info.name, t.info.name + std::strlen(t.info.name),
                [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; })) {
            *type = GgmlType(t.id);
            return &t.info;
        }
    return nullptr;
}

double ggmlBitsPerWeight(GgmlType type)
{
    const GgmlTypeInfo &t = ggmlTypeInfo(type);
    return 8.0 * double(t.blockBytes) / double(t.blockElements);
}

namespace {

// n values of blocks of `Elements` values in `Bytes` bytes, each decoded by `Decode` (called directly, so inlined).
// The sizes repeat the table's (kTypes) as constants: read from the table at run time, a Q8_0 token of a 0.5B model
// took 63–77 ms against 41–68 ms (measured alternately, the Zen 4, 2026-12-01). tst_gguf decodes every type.
template <void (*Decode)(const unsigned char *, float *), int64_t Elements, int64_t Bytes>
[[gnu::noinline]] void decodeBlocks(const unsigned char *src, int64_t n, float *dst)
{
    for (int64_t i = 0; i < n / Elements; ++i)
        Decode(src + i * Bytes, dst + i * Elements);
}

// dotGgmlRows for blocks of `Elements` values in `Bytes` bytes: each block decoded into the core's cache and multiplied
// at once into 64 lanes (a 32-element type's two at a time), element e of a row summed in lane e % 64. The lanes are
// indexed by constants so that they stay in registers.
template <void (*Decode)(const unsigned char *, float *), int64_t Elements, int64_t Bytes>
void dotRows(const unsigned char *rows, int64_t count, int64_t columns, const float *x, float *out, bool accumulate)
{
    constexpr int kLanes = 64; // enough sums in flight that the multiply-adds do not wait on each other
    static_assert(Elements == 32 || Elements % kLanes == 0);
    const int64_t rowBytes = columns / Elements * Bytes;
    constexpr int64_t kStep = std::max<int64_t>(Elements, kLanes); // a 32-element type's blocks two at a time
    alignas(64) float w[kStep];
    for (int64_t r = 0; r < count; ++r) {
        const unsigned char *row = rows + r * rowBytes;
        alignas(64) float lanes[kLanes] = {};
        int64_t at = 0;
        for (; at + kStep <= columns; at += kStep) {
            for (int64_t b = 0; b < kStep / Elements; ++b)
                Decode(row + (at / Elements + b) * Bytes, w + b * Elements);
            for (int64_t j = 0; j < kStep; j += kLanes)
                for (int k = 0; k < kLanes; ++k)
                    lanes[k] = std::fma(x[at + j + k], w[j + k], lanes[k]);
        }
        if (at < columns) { // an odd last 32-element block
            Decode(row + at / Elements * Bytes, w);
            for (int k = 0; k < 32; ++k)
                lanes[k] = std::fma(x[at + k], w[k], lanes[k]);
        }
        for (int width = kLanes / 2; width >= 1; width /= 2)
            for (int k = 0; k < width; ++k)
                lanes[k] += lanes[k + width];
        out[r] = accumulate ? out[r] + lanes[0] : lanes[0];
    }
}

using BlockDecoder = void (*)(const unsigned char *, float *);

// Calls act.template operator()<Decode, Elements, Bytes>() for a type whose block decoder is inlined into the loops
// above (the types models are mostly stored in) and says true; false for the others.
template <typename Act> bool withInlinedDecoder(GgmlType type, Act &&act)
{
    switch (type) {
    case GgmlType::Q8_0:
        act.template operator()<q8_0, 32, 34>();
        return true;
    case GgmlType::Q4_0:
        act.template operator()<q4_0, 32, 18>();
        return true;
    case GgmlType::Q5_0:
        act.template operator()<q5_0, 32, 22>();
        return true;
    case GgmlType::Q4_1:
        act.template operator()<q4_1, 32, 20>();
        return true;
    case GgmlType::Q5_1:
        act.template operator()<q5_1, 32, 24>();
        return true;
    case GgmlType::IQ4_NL:
        act.template operator()<iq4_nl, 32, 18>();
        return true;
    case GgmlType::IQ4_XS:
        act.template operator()<iq4_xs, kQkK, 136>();
        return true;
    case GgmlType::MXFP4:
        act.template operator()<mxfp4, 32, 17>();
        return true;
    case GgmlType::Q2_K:
        act.template operator()<q2_k, kQkK, 84>();
        return true;
    case GgmlType::Q3_K:
        act.template operator()<q3_k, kQkK, 110>();
        return true;
    case GgmlType::Q4_K:
        act.template operator()<q4_k, kQkK, 144>();
        return true;
    case GgmlType::Q5_K:
        act.template operator()<q5_k, kQkK, 176>();
        return true;
    case GgmlType::Q6_K:
        act.template operator()<q6_k, kQkK, 210>();
        return true;
    case GgmlType::F16:
        act.template operator()<f16Block, 32, 64>();
        return true;
    case GgmlType::BF16:
        act.template operator()<bf16Block, 32, 64>();
        return true;
    default:
        return false;
    }
}

} // namespace

bool dotGgmlRows(GgmlType type, const unsigned char *rows, int64_t count, int64_t columns, const float *x, float *out,
    bool accumulate)
{
    if (columns % ggmlTypeInfo(type).blockElements != 0 || columns % 32 != 0)
        return false;
    return withInlinedDecoder(type, [&]<BlockDecoder Decode, int64_t Elements, int64_t Bytes>() {
        dotRows<Decode, Elements, Bytes>(rows, count, columns, x, out, accumulate);
    });
}

void dequantizeGgml(GgmlType type, const unsigned char *src, int64_t n, float *dst)
{
    const GgmlTypeInfo &t = ggmlTypeInfo(type);
    if (!t.read() || n % t.blockElements != 0)
        throw Error(std::string("cannot dequantize ") + std::to_string(n) + " elements of " + t.name);
    // The unquantized types a value at a time, without a call per value.
    if (type == GgmlType::F32) {
        std::memcpy(dst, src, size_t(n) * sizeof(float));
    } else if (type == GgmlType::F16) {
        const int64_t whole = n / 32 * 32;
        decodeBlocks<f16Block, 32, 64>(src, whole, dst);
        for (int64_t i = whole; i < n; ++i)
            dst[i] = halfToFloat(u16(src + 2 * i));
    } else if (type == GgmlType::BF16) {
        const int64_t whole = n / 32 * 32;
        decodeBlocks<bf16Block, 32, 64>(src, whole, dst);
        for (int64_t i = whole; i < n; ++i)
            dst[i] = bf16ToFloat(u16(src + 2 * i));
    } else if (!withInlinedDecoder(type, [&]<BlockDecoder Decode, int64_t Elements, int64_t Bytes>() {
                   decodeBlocks<Decode, Elements, Bytes>(src, n, dst);
               })) {
        for (int64_t i = 0; i < n / t.blockElements; ++i)
            t.decode(src + i * t.blockBytes, dst + i * t.blockElements);
    }
}

std::string quantizeGgml(GgmlType type, const float *src, int64_t n)
{
    const GgmlTypeInfo &t = ggmlTypeInfo(type);
    if (!t.written() || n % t.blockElements != 0)
        throw Error(std::string("cannot write ") + std::to_string(n) + " elements as " + t.name);
    std::string out(size_t(n / t.blockElements * t.blockBytes), '\0');
    auto *blocks = reinterpret_cast<unsigned char *>(out.data());
    for (int64_t i = 0; i < n / t.blockElements; ++i)
        t.encode(src + i * t.blockElements, blocks + i * t.blockBytes);
    return out;
}

} // namespace atlas
