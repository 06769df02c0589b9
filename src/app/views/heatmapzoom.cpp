#include "views/heatmapzoom.h"

#include <QCoreApplication>
#include <QKeyEvent>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

bool zoomKey(int key)
{
    return key == Qt::Key_Plus || key == Qt::Key_Equal || key == Qt::Key_Minus || key == Qt::Key_0;
}

bool arrowKey(int key)
{
    return key == Qt::Key_Left || key == Qt::Key_Right || key == Qt::Key_Up || key == Qt::Key_Down;
}

} // namespace

void HeatmapZoom::setMatrixSize(int rows, int cols)
{
    rows = std::max(0, rows);
    cols = std::max(0, cols);
    if (rows != m_rows || cols != m_cols) {
        m_window = {};
        m_dragStart.reset();
    }
    m_rows = rows;
    m_cols = cols;
}

bool HeatmapZoom::setWindow(const CellWindow &window)
{
    const CellWindow w = window.within(m_rows, m_cols);
    if (w == this->window())
        return false;
    m_window = w;
    return true;
}

bool HeatmapZoom::zoomAround(int row, int col, double factor)
{
    const CellWindow w = window();
    const int rows = std::clamp(int(std::lround(w.rows * factor)), std::min(4, m_rows), m_rows);
    const int cols = std::clamp(int(std::lround(w.cols * factor)), std::min(4, m_cols), m_cols);
    const double atRow = w.rows > 0 ? double(row - w.row0) / w.rows : 0;
    const double atCol = w.cols > 0 ? double(col - w.col0) / w.cols : 0;
    return setWindow({int(std::lround(row - atRow * rows)), rows, int(std::lround(col - atCol * cols)), cols});
}

bool HeatmapZoom::dragBy(double cellsDown, double cellsRight)
{
    if (!m_dragStart)
        return false;
    CellWindow moved = *m_dragStart; // the content follows the pointer: the window moves against it
    moved.row0 -= int(std::lround(cellsDown));
    moved.col0 -= int(std::lround(cellsRight));
    return setWindow(moved);
}

bool HeatmapZoom::dragTo(QPointF pointer, QSize pixels)
{
    const CellWindow w = window();
    return dragBy((pointer.y() - m_dragFrom.y()) * w.rows / std::max(1, pixels.height()),
        (pointer.x() - m_dragFrom.x()) * w.cols / std::max(1, pixels.width()));
}

QString HeatmapZoom::described() const
{
    if (!zoomed())
        return {};
    const CellWindow w = window();
    return QCoreApplication::translate("HeatmapPlot",
        "rows %1\u2013%2, columns %3\u2013%4 of %5 \u00D7 %6 (the wheel zooms, a drag moves, a double-click shows all)")
        .arg(w.row0)
        .arg(w.row0 + w.rows - 1)
        .arg(w.col0)
        .arg(w.col0 + w.cols - 1)
        .arg(m_rows)
        .arg(m_cols);
}

bool HeatmapZoom::takesKey(const QKeyEvent &key) const
{
    if (key.modifiers() & ~(Qt::ShiftModifier | Qt::KeypadModifier) || m_rows == 0 || m_cols == 0)
        return false; // Ctrl+= and Ctrl+− zoom the window's fonts
    return zoomKey(key.key()) || (arrowKey(key.key()) && zoomed());
}

bool HeatmapZoom::press(const QKeyEvent &key)
{
    if (!takesKey(key))
        return false;
    const CellWindow w = window();
    const int rowStep = std::max(1, w.rows / 10), colStep = std::max(1, w.cols / 10);
    switch (key.key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        return zoomAround(w.row0 + w.rows / 2, w.col0 + w.cols / 2, kStep);
    case Qt::Key_Minus:
        return zoomAround(w.row0 + w.rows / 2, w.col0 + w.cols / 2, 1 / kStep);
    case Qt::Key_0:
        return showAll();
    case Qt::Key_Left:
        return setWindow({w.row0, w.rows, w.col0 - colStep, w.cols});
    case Qt::Key_Right:
        return setWindow({w.row0, w.rows, w.col0 + colStep, w.cols});
    case Qt::Key_Up:
        return setWindow({w.row0 - rowStep, w.rows, w.col0, w.cols});
    case Qt::Key_Down:
        return setWindow({w.row0 + rowStep, w.rows, w.col0, w.cols});
    default:
        return false;
    }
}

} // namespace atlas
