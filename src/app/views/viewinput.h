#pragma once

#include "trace/trace.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace atlas {

// Everything a view draws from: a trace (complete, or partial while the user steps; a view shows
// "not computed yet" for a tensor the trace lacks) and how to label tokens.
struct ViewInput
{
    std::shared_ptr<const Trace> trace;
    QStringList tokens; // display label of each input position (readable, short)
    std::function<QString(int)> vocabLabel; // display label of any vocabulary id (next-token bars)
    int layers = 0;
    int heads = 0;
    bool causal = true;
    std::vector<int> padding; // padding positions of the input
};

// Reading a ViewInput: the trace names, head tensors and token labels every view uses.

// "layer.{layer}.{suffix}", e.g. traceName(0, "attn.probs").
std::string traceName(int layer, const char *suffix);
// The [H, T, T] tensor layer.{layer}.{suffix} when it is in the trace and has head `head`; otherwise nullptr,
// with *problem empty when the tensor is simply not computed yet, or saying what is wrong (bad layer/head).
const Tensor *findHeadTensor(const ViewInput &input, int layer, const char *suffix, int head, QString *problem);
// "Not computed yet: step to <op> (<trace name>)".
QString notComputedText(const QString &op, const std::string &name);
// Token labels for positions 0..count-1 ("#i" where the input has none).
QString tokenLabel(const ViewInput &input, int position);
QStringList tokenLabels(const ViewInput &input, int count);
// "query 'the' (#3) → key 'cat' (#1)"
QString cellPrefix(const ViewInput &input, int row, int col);
// A number for tooltips: 4 significant digits, "−∞" for minus infinity.
QString formatValue(double value);

} // namespace atlas
