#pragma once

#include "tensor/tensor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace atlas {

// A matrix kept in memory in the compact encoding its file stores (a GGUF file's quantized blocks, F16 or BF16), each
// row decoding on its own. A Tensor made from one (Tensor::packed) has the matrix's shape: the layers' products decode
// a tile of rows at a time into a small buffer (packedWeightProduct), the embedding the rows of its tokens, and
// anything else that reads the values gets the whole matrix decoded once and kept (decoded()): a 4B-parameter Q4_K_M
// model then takes about 2.5 GB instead of the 16 GB of its float32 values.
class PackedRows
{
public:
    // Decodes `elements` values, a whole number of rows, from the encoded bytes at `encoded`.
    using Decoder = std::function<void(const unsigned char *encoded, int64_t elements, float *out)>;
    // The product of one vector with `count` encoded rows, decoded a little at a time: out[r] = x · row r, or out[r] +=
    // it when accumulating (dotGgmlRows). False, with nothing computed, where the encoding has no such product.
    using RowDot = std::function<bool(
        const unsigned char *encoded, int64_t count, int64_t columns, const float *x, float *out, bool accumulate)>;

    // `rows` rows of `columns` values, each `rowBytes` bytes long; `encoded` holds them back to back. `encoding` names
    // them for people ("Q4_K"). `dot`, when given, multiplies a vector by the rows without decoding them whole.
    PackedRows(int64_t rows, int64_t columns, size_t rowBytes, std::string encoding, Decoder decode,
        std::vector<unsigned char> encoded, RowDot dot = {});

    int64_t rows() const { return m_rows; }
    int64_t columns() const { return m_columns; }
    size_t rowBytes() const { return m_rowBytes; }
    size_t bytes() const { return size_t(m_rows) * m_rowBytes; }
    const std::string &encoding() const { return m_encoding; }
    const unsigned char *row(int64_t r) const { return m_bytes->data() + m_offset + size_t(r) * m_rowBytes; }

    // Rows [first, first + count) decoded into out (count × columns values).
    void decodeRows(int64_t first, int64_t count, float *out) const;
    // The RowDot product of rows [first, first + count) with x into out[first …]; false where the encoding has none.
    bool dotRows(int64_t first, int64_t count, const float *x, float *out, bool accumulate) const;
    // The whole matrix decoded, once, and kept while any copy of this matrix lives (thread-safe).
    const FloatBuffer &decoded() const;

    // The same encoded rows in another order: row r of the result is row sourceRow[r] of this one.
    std::shared_ptr<const PackedRows> reordered(const std::vector<int64_t> &sourceRow) const;
    // Rows [first, first + count), sharing this matrix's bytes (one expert of a stack of them), read as rows.
    std::shared_ptr<const PackedRows> rowRange(int64_t first, int64_t count) const;

    // The same rows read as `stacks` matrices, each transposed: a tensor of the logical shape [stacks, columns,
    // rows / stacks], as gpt-oss stacks its experts (x W, W [D, 2F]), kept as the rows of each Wᵀ that the products
    // read a tile at a time (rowRange).
    std::shared_ptr<const PackedRows> asTransposedStacks(int64_t stacks) const;
    int64_t transposedStacks() const { return m_transposedStacks; } // 0: read as rows
    // The rows of a and b in turn, a₀ b₀ a₁ b₁ …, as one matrix (gpt-oss's gate and up, interleaved); both of one
    // encoding and shape.
    static std::shared_ptr<const PackedRows> interleaved(const PackedRows &a, const PackedRows &b);
    // Every value in the layout a tensor reads: the rows, or each stack transposed.
    void decodeAll(float *out) const;

private:
    PackedRows(const PackedRows &whole, int64_t first, int64_t count);
    void checkRows(int64_t first, int64_t count) const; // throws for rows outside the matrix

    int64_t m_rows = 0, m_columns = 0;
    size_t m_rowBytes = 0;
    std::string m_encoding;
    Decoder m_decode;
    RowDot m_dot;
    std::shared_ptr<const std::vector<unsigned char>> m_bytes;
    size_t m_offset = 0;
    int64_t m_transposedStacks = 0;
    mutable std::once_flag m_decodedOnce;
    mutable FloatBuffer m_decoded;
};

// out (T, O) = x (T, I) Wᵀ, or out += it when accumulating, for a packed W of O rows and I columns (nn.Linear's
// layout): tiles of W's rows are decoded and multiplied on each core in turn (matrixProduct), so no more than a tile
// per core is ever decoded. Each element of out is summed in the same order whatever the number of cores. Up to
// kFewRows rows of x (the cached generator's tokens) take small tiles that stay in the core's cache, multiplied by
// Eigen's product rather than the BLAS's, and one row (a new token) W's RowDot where its encoding has one: the same
// values to float32 rounding, summed in another order.
constexpr int64_t kFewRows = 4;
void packedWeightProduct(MatrixMap out, ConstMatrixMap x, const PackedRows &w, bool accumulate = false);

} // namespace atlas
