#pragma once

#include "trace/trace.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
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

} // namespace atlas
