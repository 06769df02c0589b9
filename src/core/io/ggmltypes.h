#pragma once

#include <cstdint>
#include <string>
#include <vector>

// The weight types of ggml (llama.cpp's tensor library), as GGUF files store them: each a block of elements with its
// own scales. Dequantization follows ggml's dequantize_row_* and gguf-py's quants.py, value for value
// (tests/tst_gguf.cpp checks every type against gguf-py, bit for bit).
namespace atlas {

// ggml_type's numbers (ggml.h), for the types this reader reads.
enum class GgmlType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    IQ4_NL = 20,
    IQ4_XS = 23,
    BF16 = 30,
    MXFP4 = 39,
};

struct GgmlTypeInfo
{
    const char *name; // ggml's: "Q4_K"
    int64_t blockElements; // elements per block: 1, 32 or 256
    int64_t blockBytes; // bytes per block
    // Decodes one block into blockElements floats; null for a type this program does not read (named in messages
    // and refused).
    void (*decode)(const unsigned char *block, float *out);
    // Encodes blockElements floats into one block as ggml's reference quantizer (quantize_row_*_ref) does, bit for
    // bit; null for a type this program does not write.
    void (*encode)(const float *in, unsigned char *block) = nullptr;

    bool read() const { return decode != nullptr; }
    bool written() const { return encode != nullptr; }
};

// Every type ggml numbers, read or not (an id ggml has retired gives null): for naming an unread type.
const GgmlTypeInfo *ggmlTypeInfo(uint32_t id);
const GgmlTypeInfo &ggmlTypeInfo(GgmlType type);
// "F32, F16, BF16, Q4_0, …": the types read, for a refusal.
std::string readGgmlTypeNames();
// "F32, F16, Q8_0, Q4_0, Q4_K": the types written.
std::string writtenGgmlTypeNames();
// The type named (case-insensitive: "q4_k", "Q8_0"), or null when no type has that name.
const GgmlTypeInfo *ggmlTypeNamed(const std::string &name, GgmlType *type);
// Bits per weight of a type: 8 · blockBytes / blockElements (4.5 for Q4_0, 4.5 for Q4_K).
double ggmlBitsPerWeight(GgmlType type);

// Decodes `n` elements (a whole number of blocks) of `type` from `src` into `dst`. `src` may have any alignment.
void dequantizeGgml(GgmlType type, const unsigned char *src, int64_t n, float *dst);
// The product of one vector with rows of `type`, each decoded a little at a time in the core's cache, never whole:
// out[r] = Σ_j x[j] · w(r, j) for the `count` rows of `columns` elements stored back to back at `rows` (out[r] += it
// when accumulating). Each w(r, j) is the value dequantizeGgml gives; the sum runs in 64 lanes of fused multiply-adds,
// added pairwise at the end, the same order on every machine. False, with nothing computed, for a type without such a
// product (then decode and multiply).
bool dotGgmlRows(GgmlType type, const unsigned char *rows, int64_t count, int64_t columns, const float *x, float *out,
    bool accumulate);

// What one block of a type holds besides its codes, for showing it: the formula that reads a weight back, and each
// sub-block's scale (and, for types with one, its minimum, subtracted), `subBlock` weights each. Empty scales for the
// unquantized types.
struct GgmlBlockScales
{
    std::string formula; // "w = d · (q − 8), q = 0 … 15"
    int64_t subBlock = 0;
    std::vector<float> scales, mins;
    // The levels of a sub-block are scale · q − min for q = lowest … highest (Q4_0: −8 … 7), or, for the types of
    // non-uniform levels (IQ4_NL, IQ4_XS, MXFP4; then lowest > highest), scale · v for each v of levelTable.
    int lowest = 0, highest = -1;
    std::vector<float> levelTable;

    // What a sub-block's scale multiplies to give each of its levels: levelTable, or q = lowest … highest.
    std::vector<float> levelMultipliers() const
    {
        std::vector<float> m(levelTable);
        for (int q = lowest; q <= highest; ++q)
            m.push_back(float(q));
        return m;
    }
};
GgmlBlockScales ggmlBlockScales(GgmlType type, const unsigned char *block);

// Encodes `n` floats (a whole number of blocks) as `type`, as ggml's ggml_quantize_chunk does without an importance
// matrix; the blocks' bytes.
std::string quantizeGgml(GgmlType type, const float *src, int64_t n);

} // namespace atlas
