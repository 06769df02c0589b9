#pragma once

#include <QFont>

namespace atlas {

// `base` at `points` points, bold or not: the one way the QPainter-drawn views size their text.
inline QFont sizedFont(const QFont &base, double points, bool bold = false)
{
    QFont f = base;
    f.setPointSizeF(points);
    f.setBold(bold);
    return f;
}

} // namespace atlas
