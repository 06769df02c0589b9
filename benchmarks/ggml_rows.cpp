// One core's time for a vector times a matrix kept in a GGUF encoding, 896 rows of 4864 values (a Qwen2.5-0.5B-shaped
// feed-forward matrix) in random blocks, best of 25: dotGgmlRows (the generator's product of one new token), decoding
// alone, and decoding 73-row tiles then multiplying them with Eigen (the product before dotGgmlRows). Built against a
// build tree's core library with its flags, from the source tree:
//
//   g++ -std=gnu++20 -O3 -march=native -ffp-contract=off -Isrc/core -isystem /usr/include/eigen3 \
//       benchmarks/ggml_rows.cpp build/src/core/libatlas_core.a -lpthread -o /tmp/ggml_rows && /tmp/ggml_rows
#include "io/ggmltypes.h"

#include <Eigen/Dense>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

using namespace atlas;
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace {

double milliseconds(std::chrono::steady_clock::time_point from)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from).count();
}

} // namespace

int main()
{
    struct Kind
    {
        GgmlType type;
        std::vector<int> scaleOffsets; // the blocks' half-precision scales, set to 2^-15 so no value is huge
    } kinds[] = {{GgmlType::Q8_0, {0}}, {GgmlType::Q4_0, {0}}, {GgmlType::Q5_0, {0}}, {GgmlType::Q4_K, {0, 2}},
        {GgmlType::Q5_K, {0, 2}}, {GgmlType::Q6_K, {208}}, {GgmlType::F16, {}}, {GgmlType::Q2_K, {80, 82}},
        {GgmlType::Q3_K, {108}}, {GgmlType::Q4_1, {0, 2}}, {GgmlType::Q5_1, {0, 2}}, {GgmlType::IQ4_NL, {0}},
        {GgmlType::IQ4_XS, {0}}, {GgmlType::MXFP4, {}}, {GgmlType::BF16, {}}};
    const int64_t columns = 4864, rows = 896, tileRows = 73;
    std::mt19937 random(1);
    for (const Kind &k : kinds) {
        const GgmlTypeInfo &info = ggmlTypeInfo(k.type);
        const int64_t blocks = columns * rows / info.blockElements;
        std::vector<unsigned char> encoded(size_t(blocks * info.blockBytes));
        for (unsigned char &b : encoded)
            b = static_cast<unsigned char>(random() & 0xFF);
        if (k.type == GgmlType::F16 || k.type == GgmlType::BF16)
            for (size_t i = 1; i < encoded.size(); i += 2)
                encoded[i] = k.type == GgmlType::F16 ? 0x3C : 0x3F; // values in [1, 2) and in [0.5, 2)
        if (k.type == GgmlType::MXFP4)
            for (int64_t b = 0; b < blocks; ++b)
                encoded[size_t(b * info.blockBytes)] = 120; // the scale 2^-8
        for (int64_t b = 0; b < blocks; ++b)
            for (int at : k.scaleOffsets) {
                encoded[size_t(b * info.blockBytes + at)] = 0x00;
                encoded[size_t(b * info.blockBytes + at + 1)] = 0x02;
            }
        std::vector<float> tile(static_cast<size_t>(columns * tileRows)), x(static_cast<size_t>(columns)),
            out(static_cast<size_t>(rows));
        for (float &v : x)
            v = float(random() % 100) / 100.0f;
        const size_t rowBytes = encoded.size() / size_t(rows);
        double dot = 1e9, decode = 1e9, tiles = 1e9;
        bool rowProduct = true;
        for (int round = 0; round < 25; ++round) {
            auto start = std::chrono::steady_clock::now();
            rowProduct = dotGgmlRows(k.type, encoded.data(), rows, columns, x.data(), out.data(), false);
            dot = std::min(dot, milliseconds(start));
            start = std::chrono::steady_clock::now();
            for (int64_t r = 0; r < rows; r += tileRows) {
                const int64_t n = std::min(tileRows, rows - r);
                dequantizeGgml(k.type, encoded.data() + size_t(r) * rowBytes, n * columns, tile.data());
            }
            decode = std::min(decode, milliseconds(start));
            start = std::chrono::steady_clock::now();
            for (int64_t r = 0; r < rows; r += tileRows) {
                const int64_t n = std::min(tileRows, rows - r);
                dequantizeGgml(k.type, encoded.data() + size_t(r) * rowBytes, n * columns, tile.data());
                Eigen::Map<RowMajor>(out.data() + r, 1, n).noalias() = Eigen::Map<const RowMajor>(x.data(), 1, columns)
                    * Eigen::Map<const RowMajor>(tile.data(), n, columns).transpose();
            }
            tiles = std::min(tiles, milliseconds(start));
        }
        char product[32] = "(none)";
        if (rowProduct)
            std::snprintf(product, sizeof product, "%.2f ms", dot);
        std::printf("%-6s dotGgmlRows %-7s   decoding alone %.2f ms   decoded tiles times Eigen %.2f ms\n", info.name,
            product, decode, tiles);
    }
}
