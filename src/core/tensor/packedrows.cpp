#include "tensor/packedrows.h"

#include "tensor/buffercache.h"
#include "tensor/matrixproduct.h"
#include "util/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <memory>
#include <optional>

namespace atlas {

PackedRows::PackedRows(int64_t rows, int64_t columns, size_t rowBytes, std::string encoding, Decoder decode,
    std::vector<unsigned char> encoded, RowDot dot)
    : m_rows(rows)
    , m_columns(columns)
    , m_rowBytes(rowBytes)
    , m_encoding(std::move(encoding))
    , m_decode(std::move(decode))
    , m_dot(std::move(dot))
    , m_bytes(std::make_shared<const std::vector<unsigned char>>(std::move(encoded)))
{
    if (rows < 0 || columns < 0 || m_bytes->size() != size_t(rows) * rowBytes)
        throw Error("packed rows: " + std::to_string(m_bytes->size()) + " bytes do not hold " + std::to_string(rows)
            + " rows of " + std::to_string(rowBytes));
}

PackedRows::PackedRows(const PackedRows &whole, int64_t first, int64_t count)
    : m_rows(count)
    , m_columns(whole.m_columns)
    , m_rowBytes(whole.m_rowBytes)
    , m_encoding(whole.m_encoding)
    , m_decode(whole.m_decode)
    , m_dot(whole.m_dot)
    , m_bytes(whole.m_bytes)
    , m_offset(whole.m_offset + size_t(first) * whole.m_rowBytes)
{
}

void PackedRows::checkRows(int64_t first, int64_t count) const
{
    if (first < 0 || count < 0 || first + count > m_rows)
        throw Error("packed rows: rows [" + std::to_string(first) + ", " + std::to_string(first + count)
            + ") outside the " + std::to_string(m_rows) + " there are");
}

void PackedRows::decodeRows(int64_t first, int64_t count, float *out) const
{
    checkRows(first, count);
    if (count > 0)
        m_decode(row(first), count * m_columns, out);
}

bool PackedRows::dotRows(int64_t first, int64_t count, const float *x, float *out, bool accumulate) const
{
    checkRows(first, count);
    return m_dot && m_transposedStacks == 0 && m_dot(row(first), count, m_columns, x, out + first, accumulate);
}

void PackedRows::decodeAll(float *out) const
{
    const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(1, m_columns));
    if (m_transposedStacks == 0) {
        parallelFor(m_rows, grain,
            [&](int64_t begin, int64_t end) { decodeRows(begin, end - begin, out + begin * m_columns); });
        return;
    }
    const int64_t rowsPerStack = m_rows / m_transposedStacks;
    parallelFor(m_transposedStacks, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> rows(size_t(rowsPerStack * m_columns));
        for (int64_t s = begin; s < end; ++s) {
            decodeRows(s * rowsPerStack, rowsPerStack, rows.data());
            MatrixMap(out + s * rowsPerStack * m_columns, m_columns, rowsPerStack)
                = ConstMatrixMap(rows.data(), rowsPerStack, m_columns).transpose();
        }
    });
}

const FloatBuffer &PackedRows::decoded() const
{
    std::call_once(m_decodedOnce, [this] {
        FloatBuffer values(size_t(m_rows * m_columns));
        decodeAll(values.data());
        m_decoded = std::move(values);
    });
    return m_decoded;
}

std::shared_ptr<const PackedRows> PackedRows::asTransposedStacks(int64_t stacks) const
{
    if (stacks < 1 || m_rows % stacks != 0)
        throw Error("packed rows: " + std::to_string(m_rows) + " rows are not " + std::to_string(stacks) + " stacks");
    auto out = std::shared_ptr<PackedRows>(new PackedRows(*this, 0, m_rows));
    out->m_transposedStacks = stacks;
    return out;
}

std::shared_ptr<const PackedRows> PackedRows::interleaved(const PackedRows &a, const PackedRows &b)
{
    if (a.m_rows != b.m_rows || a.m_columns != b.m_columns || a.m_rowBytes != b.m_rowBytes
        || a.m_encoding != b.m_encoding)
        throw Error("packed rows: " + std::to_string(a.m_rows) + " × " + std::to_string(a.m_columns) + " "
            + a.m_encoding + " and " + std::to_string(b.m_rows) + " × " + std::to_string(b.m_columns) + " "
            + b.m_encoding + " cannot be interleaved");
    std::vector<unsigned char> both(2 * a.bytes());
    for (int64_t r = 0; r < a.m_rows; ++r) {
        std::copy_n(a.row(r), a.m_rowBytes, both.data() + size_t(2 * r) * a.m_rowBytes);
        std::copy_n(b.row(r), b.m_rowBytes, both.data() + size_t(2 * r + 1) * a.m_rowBytes);
    }
    return std::make_shared<const PackedRows>(
        2 * a.m_rows, a.m_columns, a.m_rowBytes, a.m_encoding, a.m_decode, std::move(both), a.m_dot);
}

std::shared_ptr<const PackedRows> PackedRows::reordered(const std::vector<int64_t> &sourceRow) const
{
    if (int64_t(sourceRow.size()) != m_rows)
        throw Error(
            "packed rows: a new order of " + std::to_string(sourceRow.size()) + " rows for " + std::to_string(m_rows));
    std::vector<unsigned char> moved(bytes());
    for (int64_t r = 0; r < m_rows; ++r) {
        const int64_t from = sourceRow[size_t(r)];
        if (from < 0 || from >= m_rows)
            throw Error("packed rows: row " + std::to_string(from) + " outside the " + std::to_string(m_rows));
        std::copy_n(row(from), m_rowBytes, moved.data() + size_t(r) * m_rowBytes);
    }
    return std::make_shared<const PackedRows>(
        m_rows, m_columns, m_rowBytes, m_encoding, m_decode, std::move(moved), m_dot);
}

std::shared_ptr<const PackedRows> PackedRows::rowRange(int64_t first, int64_t count) const
{
    checkRows(first, count);
    return std::shared_ptr<const PackedRows>(new PackedRows(*this, first, count));
}

namespace {

// A few rows of x (the generator's one new token). One row is multiplied by W's RowDot where its encoding has one, W
// never written out decoded (a token of a Qwen2.5-0.5B-shaped Q8_0 file: 64 ms against 85 ms; docs/benchmarks.md);
// otherwise tiles of W of 256 KiB are decoded, each multiplied while it is still in the core's cache (the 4 MiB tiles
// of longer inputs would go out to memory and back for every token). The threads
// take tiles in turn (parallelForPieces): each element of out is one tile's product, whoever computes it.
void fewRowsProduct(MatrixMap out, ConstMatrixMap x, const PackedRows &w, bool accumulate)
{
    const int64_t I = w.columns(), O = w.rows();
    const int64_t tileRows = std::clamp<int64_t>((int64_t(1) << 16) / std::max<int64_t>(1, I), 1, O);
    const int64_t tiles = (O + tileRows - 1) / tileRows;
    parallelForPieces(tiles, 4, [&](int64_t begin, int64_t end) {
        std::optional<ScratchFloats> weights; // every value decoded before use
        for (int64_t tile = begin; tile < end; ++tile) {
            const int64_t first = tile * tileRows, rows = std::min(tileRows, O - first);
            if (x.rows() == 1 && w.dotRows(first, rows, x.data(), out.data(), accumulate))
                continue;
            if (!weights)
                weights.emplace(tileRows * I);
            w.decodeRows(first, rows, weights->data());
            const ConstMatrixMap tileWeights(weights->data(), rows, I);
            if (accumulate)
                out.middleCols(first, rows).noalias() += x * tileWeights.transpose();
            else
                out.middleCols(first, rows).noalias() = x * tileWeights.transpose();
        }
    });
}

} // namespace

void packedWeightProduct(MatrixMap out, ConstMatrixMap x, const PackedRows &w, bool accumulate)
{
    const int64_t T = x.rows(), I = w.columns(), O = w.rows();
    if (x.cols() != I || out.rows() != T || out.cols() != O)
        throw Error("packed product: input " + std::to_string(T) + " × " + std::to_string(x.cols()) + ", weight "
            + std::to_string(O) + " × " + std::to_string(I) + ", output " + std::to_string(out.rows()) + " × "
            + std::to_string(out.cols()));
    if (T == 0 || O == 0)
        return;
    if (T <= kFewRows)
        return fewRowsProduct(out, x, w, accumulate);
    // Tiles of at most 4 MiB decoded, as many on every core (each core takes a run of them), two at least.
    const int64_t threads = workerThreads();
    const int64_t byBytes = std::max<int64_t>(1, (int64_t(1) << 20) / std::max<int64_t>(1, I));
    int64_t tiles = std::max((O + byBytes - 1) / byBytes, 2 * threads);
    tiles = std::min(O, (tiles + threads - 1) / threads * threads);
    const int64_t tileRows = (O + tiles - 1) / tiles;
    tiles = (O + tileRows - 1) / tileRows;
    parallelFor(tiles, 1, [&](int64_t begin, int64_t end) {
        // A tile's product goes straight into its columns of out; added to them, it is summed on its own first, so that
        // out gains one rounded sum per element (as the whole product's would be).
        ScratchFloats weights(tileRows * I), products(accumulate ? T * tileRows : 0);
        for (int64_t tile = begin; tile < end; ++tile) {
            const int64_t first = tile * tileRows, rows = std::min(tileRows, O - first);
            w.decodeRows(first, rows, weights.data());
            const ConstMatrixMap tileWeights(weights.data(), rows, I);
            if (!accumulate) {
                matrixProduct(out.data() + first, O, x, false, tileWeights, true, false);
                continue;
            }
            MatrixMap product(products.data(), T, rows);
            matrixProduct(product, x, false, tileWeights, true, false);
            out.middleCols(first, rows) += product;
        }
    });
}

} // namespace atlas
