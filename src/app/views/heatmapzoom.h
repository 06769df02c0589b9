#pragma once

#include "views/downsample.h"

#include <QPointF>
#include <QSize>
#include <QString>

#include <optional>

class QKeyEvent;

namespace atlas {

// The cells a heat map shows: the whole matrix, or the window the wheel or the keys zoomed into and a drag or the
// arrows moved. It knows nothing of drawing: the plot tells it the matrix's size and what the mouse or keys did, in
// cells, and each call says whether the window changed.
class HeatmapZoom
{
public:
    static constexpr double kStep = 0.8; // a wheel notch or a key zooms in by a fifth of the window

    // A matrix of another size resets the window (it means nothing there); one of the same size (another head) keeps
    // it.
    void setMatrixSize(int rows, int cols);
    CellWindow window() const { return m_window.within(m_rows, m_cols); }
    bool zoomed() const { return window() != CellWindow {0, m_rows, 0, m_cols}; }

    bool setWindow(const CellWindow &window);
    // By `factor` (< 1: in), original cell (row, col) keeping its place; at least 4 × 4 cells, at most the matrix.
    bool zoomAround(int row, int col, double factor);
    bool showAll() { return setWindow({0, m_rows, 0, m_cols}); }

    // A drag: started on the window shown with the pointer at `from`, moved by (cellsDown, cellsRight) since, as the
    // pointer went; dragTo moves it to where the pointer is now over cells drawn `pixels` wide and high.
    void startDrag(QPointF from = {})
    {
        m_dragStart = window();
        m_dragFrom = from;
    }
    bool dragBy(double cellsDown, double cellsRight);
    bool dragTo(QPointF pointer, QSize pixels);
    void endDrag() { m_dragStart.reset(); }
    bool dragging() const { return m_dragStart.has_value(); }

    // + and − zoom about the window's centre, the arrows move it by a tenth, 0 shows all (Home stays the window's
    // Rewind). Whether the key is one of them and means something now (the arrows move a zoomed window only).
    bool takesKey(const QKeyEvent &key) const;
    bool press(const QKeyEvent &key);

    // The window in words for the note under the plot ("rows 10–40, columns …"), empty when the whole matrix shows.
    QString described() const;

private:
    int m_rows = 0, m_cols = 0;
    CellWindow m_window; // empty: the whole matrix
    std::optional<CellWindow> m_dragStart;
    QPointF m_dragFrom;
};

} // namespace atlas
