#pragma once

#include "views/downsample.h"

#include <QSize>
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

// A heat map's token labels on both axes (columns on x, rows on y), rebuilt only when the labels, the room for them,
// the font or the window shown change.
class HeatmapTicks
{
public:
    // Whether they differ from the labels set before.
    bool setLabels(const QStringList &rowLabels, const QStringList &colLabels);
    bool setIndexInLabels(bool on);
    // The next update() relabels whatever it is given.
    void invalidate() { m_key.clear(); }
    // Labels a rows × cols matrix's `window` in `room` pixels; true when the labels changed.
    bool update(QCPAxis *x, QCPAxis *y, QSize room, int rows, int cols, const CellWindow &window);

private:
    bool m_indexInLabels = true;
    QStringList m_rowLabels, m_colLabels;
    QString m_key; // what the current tickers were built from
};

} // namespace atlas
