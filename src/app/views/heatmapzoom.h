#pragma once

#include "views/downsample.h"

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

    // A drag: started on the window shown, moved by (cellsDown, cellsRight) since, as the pointer went.
    void startDrag() { m_dragStart = window(); }
    bool dragBy(double cellsDown, double cellsRight);
    void endDrag() { m_dragStart.reset(); }
    bool dragging() const { return m_dragStart.has_value(); }

    // + and − zoom about the window's centre, the arrows move it by a tenth, 0 shows all (Home stays the window's
    // Rewind). Whether the key is one of them and means something now (the arrows move a zoomed window only).
    bool takesKey(const QKeyEvent &key) const;
    bool press(const QKeyEvent &key);

private:
    int m_rows = 0, m_cols = 0;
    CellWindow m_window; // empty: the whole matrix
    std::optional<CellWindow> m_dragStart;
};

} // namespace atlas
