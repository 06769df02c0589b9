#include "views/viewinput.h"

#include <QObject>

#include <algorithm>
#include <cmath>

namespace atlas {

std::string traceName(int layer, const char *suffix)
{
    return "layer." + std::to_string(layer) + "." + suffix;
}

const Tensor *findHeadTensor(const ViewInput &input, int layer, const char *suffix, int head, QString *problem)
{
    problem->clear();
    if (layer < 0 || (input.layers > 0 && layer >= input.layers)) {
        *problem = QObject::tr("Layer %1 does not exist: the model has %2 layers").arg(layer).arg(input.layers);
        return nullptr;
    }
    const std::string name = traceName(layer, suffix);
    const TraceEntry *entry = input.trace ? input.trace->find(name) : nullptr;
    if (entry == nullptr)
        return nullptr;
    const Tensor &t = entry->tensor;
    if (t.rank() != 3 || t.dim(1) != t.dim(2) || t.dim(1) < 1) {
        *problem = QObject::tr("%1 has shape %2, expected [H, T, T]")
                       .arg(QString::fromStdString(name), QString::fromStdString(t.shapeString()));
        return nullptr;
    }
    if (head < 0 || head >= t.dim(0)) {
        *problem = QObject::tr("Head %1 does not exist: layer %2 has %3 heads").arg(head).arg(layer).arg(t.dim(0));
        return nullptr;
    }
    return &t;
}

QString notComputedText(const QString &op, const std::string &name)
{
    return QObject::tr("Not computed yet: step to %1 (%2)").arg(op, QString::fromStdString(name));
}

QString tokenLabel(const ViewInput &input, int position)
{
    if (position >= 0 && position < input.tokens.size())
        return input.tokens.at(position);
    return QStringLiteral("#%1").arg(position);
}

QStringList tokenLabels(const ViewInput &input, int count)
{
    QStringList labels(std::max(0, count));
    for (int i = 0; i < count; ++i)
        labels[i] = tokenLabel(input, i);
    return labels;
}

QString cellPrefix(const ViewInput &input, int row, int col)
{
    // One multi-argument arg() so a token that contains "%2" is not substituted again.
    return QObject::tr("query '%1' (#%2) \u2192 key '%3' (#%4)")
        .arg(tokenLabel(input, row), QString::number(row), tokenLabel(input, col), QString::number(col));
}

QString formatValue(double value)
{
    if (std::isinf(value))
        return value < 0 ? QStringLiteral("\u2212\u221E") : QStringLiteral("\u221E");
    return QString::number(value, 'g', 4);
}

} // namespace atlas
