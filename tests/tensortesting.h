#pragma once

#include "model/model.h"
#include "model/modeltokenizer.h"
#include "tensor/tensor.h"
#include "tokenize/tokenizer.h"

#include <QByteArray>
#include <QFile>
#include <QString>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// Small helpers the core's tests share: fixtures' paths, tensors written out and compared.
namespace atlas::testing {

// A file under tests/data.
inline QString dataPath(const QString &relative)
{
    return QStringLiteral(ATLAS_TEST_DATA "/") + relative;
}

// A file's bytes, empty when it cannot be read.
inline QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A rows × cols matrix of normal draws (mean 0, standard deviation `scale`) from `seed`.
inline MatrixRM randomMatrix(int64_t rows, int64_t cols, unsigned seed, float scale = 1.0f)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, scale);
    MatrixRM m(rows, cols);
    for (int64_t i = 0; i < m.size(); ++i)
        m.data()[i] = normal(rng);
    return m;
}

inline std::vector<float> values(const Tensor &t)
{
    return {t.data(), t.data() + t.numel()};
}

inline Tensor literal(Shape shape, std::vector<float> values)
{
    Tensor t(std::move(shape));
    std::copy(values.begin(), values.end(), t.data());
    return t;
}

inline bool sameBits(const Tensor &a, const Tensor &b)
{
    // memcmp with the null data of a zero-element tensor is undefined (UBSan): compare only what there is
    return a.shape() == b.shape() && (a.bytes() == 0 || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

// The largest absolute difference of two tensors' elements; infinite when their shapes differ.
inline float maxDifference(const Tensor &a, const Tensor &b)
{
    if (a.shape() != b.shape())
        return INFINITY;
    float worst = 0;
    for (int64_t i = 0; i < a.numel(); ++i)
        worst = std::max(worst, std::abs(a.data()[i] - b.data()[i]));
    return worst;
}

// TEXT's ids under the model's own tokenizer.
inline std::vector<int> encode(const Model &model, const std::string &text)
{
    return tokenizerForModel(model)->encode(text);
}

} // namespace atlas::testing
