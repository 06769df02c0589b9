#pragma once

#include <QFont>
#include <QString>

#include <functional>
#include <vector>

class QCPItemText;

namespace atlas {

class HeatmapPlot;

// Text written inside a heat map's cells (the logit lens's top token, an attribution's value), each in the ink its
// cell's colour asks for (palette::inkOn), and nothing in a cell too small to hold it.
class HeatmapCellTexts
{
public:
    // What to write in cell (row, col) of cells `cellWidth` × `cellHeight` pixels at the font given to write(); empty
    // for nothing. A text wider or taller than its cell is left out (the hover still gives it).
    using Text = std::function<QString(int row, int col, double cellWidth, double cellHeight)>;

    // Forgets the texts of the last matrix (removing them from `plot`), for a matrix of rows × cols.
    void reset(HeatmapPlot *plot, int rows, int cols);
    // Writes every cell's text at `font` from the plot's current layout; replots when anything changed.
    void write(HeatmapPlot *plot, const QFont &font, const Text &text);
    // The text shown in a cell; empty where none is.
    QString shown(int row, int col) const;

private:
    std::vector<QCPItemText *> m_items; // [rows × cols], null where nothing was ever written
    int m_rows = 0, m_cols = 0;
};

} // namespace atlas
