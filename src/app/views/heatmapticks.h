#pragma once

#include <QStringList>

class QCPAxis;

namespace atlas {

// A heat map axis's tick labels for `count` tokens over `pixels`: every token is labelled when the labels fit at
// the axis's font size (one line of text per row; a column's label upright when it is narrow enough, else turned);
// otherwise every step-th, the step (1, 2, 5, 10, …) chosen so the labels fit with a little air. With
// `indexInLabels` a row's label always carries its index ("#5 t"), a column's when some are skipped. The tokens are
// [first, first + count) of `labels` (a zoomed window's).
void setTokenTicks(QCPAxis *axis, const QStringList &labels, int count, int pixels, bool horizontal, bool indexInLabels,
    int first = 0);

} // namespace atlas
