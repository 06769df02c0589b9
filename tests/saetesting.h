#pragma once

#include "features/sparseautoencoder.h"
#include "tensortesting.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <vector>

namespace atlas::testing {

// A dictionary whose every feature is known from the stream x ∈ ℝ^d: feature i < d reads max(x_i, 0), feature d + i
// reads max(−x_i, 0), and the decoder puts them back, x exactly (no bias, b_dec not subtracted).
inline SparseAutoencoder splitDictionary(int64_t d)
{
    SparseAutoencoder s;
    s.applyDecoderBiasToInput = false;
    s.wEnc = Tensor({d, 2 * d});
    s.wDec = Tensor({2 * d, d});
    for (int64_t i = 0; i < d; ++i) {
        s.wEnc.data()[i * 2 * d + i] = 1;
        s.wEnc.data()[i * 2 * d + d + i] = -1;
        s.wDec.data()[i * d + i] = 1;
        s.wDec.data()[(d + i) * d + i] = -1;
    }
    s.bEnc = Tensor({2 * d});
    s.bDec = Tensor({d});
    return s;
}

// Row `row` of the reference's matrix `key` of case `index` (tests/data/sae/reference.json).
inline std::vector<double> referenceRow(int index, const char *key, int row)
{
    QFile f(dataPath("sae/reference.json"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QJsonObject c = QJsonDocument::fromJson(f.readAll()).object()["cases"].toArray()[index].toObject();
    std::vector<double> out;
    for (const QJsonValue &v : c[key].toArray()[row].toArray())
        out.push_back(v.toDouble());
    return out;
}

inline Tensor referenceInput(int index)
{
    Tensor x({5, 6});
    for (int r = 0; r < 5; ++r) {
        const std::vector<double> row = referenceRow(index, "x", r);
        for (int c = 0; c < 6; ++c)
            x.data()[r * 6 + c] = float(row[size_t(c)]);
    }
    return x;
}

} // namespace atlas::testing
