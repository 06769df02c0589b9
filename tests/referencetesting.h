#pragma once

#include "engine/input.h"
#include "io/npy.h"
#include "model/model.h"
#include "tensor/tensor.h"
#include "util/error.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

// Comparing the engine's tensors with the PyTorch references under tests/data (tst_backprop, tst_positions).
namespace atlas::testing {

// The relative tolerance of a comparison with a PyTorch reference.
constexpr double kRelTol = 1e-4;

inline std::vector<int> intList(const QJsonValue &value)
{
    std::vector<int> out;
    for (const QJsonValue &v : value.toArray())
        out.push_back(v.toInt());
    return out;
}

// The input make_family_reference.py ran for tests/data/<model>: <model>_ref/tokens.json, or input.json with an
// encoder–decoder's source.
inline Input familyReferenceInput(const QString &model)
{
    const QString ref = QStringLiteral(ATLAS_TEST_DATA "/") + model + "_ref/";
    Input input;
    if (QFile f(ref + "input.json"); f.open(QIODevice::ReadOnly)) {
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        input.tokens = intList(o.value("tokens"));
        input.source = intList(o.value("source"));
        return input;
    }
    QFile f(ref + "tokens.json");
    if (f.open(QIODevice::ReadOnly))
        input.tokens = intList(QJsonDocument::fromJson(f.readAll()).array());
    return input;
}

// One reference of a make_*_reference.py script: tests/data/<set>/<name> (config.json, model.safetensors) and
// <name>_ref/input.json {"tokens", "targets"}, and for an encoder–decoder {"source", "source_padding"}.
struct ReferenceCase
{
    std::shared_ptr<Model> model;
    Input input;
    std::vector<int> targets;
};

inline ReferenceCase loadReferenceCase(const QString &set, const QString &name)
{
    const QString dir = QStringLiteral(ATLAS_TEST_DATA "/") + set + "/";
    QFile f(dir + name + "_ref/input.json");
    if (!f.open(QIODevice::ReadOnly))
        throw Error("missing " + f.fileName().toStdString());
    const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    ReferenceCase c;
    c.model = std::make_shared<Model>(Model::load((dir + name).toStdString()));
    c.input.tokens = intList(o.value("tokens"));
    c.targets = intList(o.value("targets"));
    c.input.source = intList(o.value("source"));
    c.input.sourcePadding = intList(o.value("source_padding"));
    return c;
}

// The gradients a make_*_reference.py script wrote into `dir` (grad.<parameter>.npy), by parameter name.
inline std::map<std::string, Tensor> referenceGradients(const QString &dir)
{
    std::map<std::string, Tensor> out;
    for (const QString &file : QDir(dir).entryList({"grad.*.npy"}, QDir::Files))
        out[file.mid(5).chopped(4).toStdString()] = readNpy(QDir(dir).filePath(file).toStdString());
    return out;
}

// Empty when `grads` holds exactly the parameters `dir` has reference gradients for (grad.<name>.npy) and
// `check(name, got, want)` finds nothing wrong with any of them; else the first problem.
template <typename Check>
QString checkReferenceGradients(const std::map<std::string, Tensor> &grads, const QString &dir, Check check)
{
    const std::map<std::string, Tensor> reference = referenceGradients(dir);
    if (reference.size() != grads.size())
        return QString("%1 gradients, %2 references in %3").arg(grads.size()).arg(reference.size()).arg(dir);
    for (const auto &[name, want] : reference) {
        const auto got = grads.find(name);
        if (got == grads.end())
            return QString::fromStdString(name) + ": no gradient";
        if (const QString why = check(QString::fromStdString(name), got->second, want); !why.isEmpty())
            return why;
    }
    return {};
}

// Rows `rows` of a [T, N] tensor, in that order (the positions a shortened reference sequence kept).
inline Tensor rowsOf(const Tensor &t, const std::vector<int> &rows)
{
    Tensor out({int64_t(rows.size()), t.dim(1)});
    for (size_t r = 0; r < rows.size(); ++r)
        out.matrix().row(int64_t(r)) = t.matrix().row(rows[r]);
    return out;
}

// Empty when max |got − want| <= relTol × max |want|, else what differs. `ratio`, when given, receives
// max |got − want| / max |want|.
inline QString compareToReference(
    const QString &name, const Tensor &got, const Tensor &want, double relTol, double *ratio = nullptr)
{
    if (got.shape() != want.shape())
        return name + ": shape " + QString::fromStdString(got.shapeString()) + ", expected "
            + QString::fromStdString(want.shapeString());
    double maxRef = 0.0, maxDiff = 0.0;
    for (int64_t i = 0; i < want.numel(); ++i) {
        maxRef = std::max(maxRef, double(std::fabs(want.data()[i])));
        maxDiff = std::max(maxDiff, std::fabs(double(got.data()[i]) - double(want.data()[i])));
    }
    const double rel = maxDiff / std::max(maxRef, 1e-30);
    if (ratio)
        *ratio = rel;
    return rel <= relTol ? QString()
                         : QString("%1: max |diff| %2 = %3 x max |ref| %4").arg(name).arg(maxDiff).arg(rel).arg(maxRef);
}

} // namespace atlas::testing
