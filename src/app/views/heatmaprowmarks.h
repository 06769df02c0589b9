#pragma once

#include <string>

class QCustomPlot;
class QCPItemRect;
class QCPItemText;

namespace atlas {

// The rows a heat map singles out, in the plot's axis coordinates: one outlined (a lesson's query, a click) and one
// covered, its weights unseen until Reveal (a predict question). −1 for none.
class HeatmapRowMarks
{
public:
    explicit HeatmapRowMarks(QCustomPlot *plot); // the items belong to the plot
    void setMarked(int row) { m_marked = row; }
    void setVeiled(int row) { m_veiled = row; }
    int marked() const { return m_marked; }
    int veiled() const { return m_veiled; }
    // Places and styles both for a rows × cols matrix in `theme`; hidden with the content, or outside the matrix.
    void update(int rows, int cols, const std::string &theme, bool contentVisible);

private:
    QCustomPlot *m_plot;
    QCPItemRect *m_veil;
    QCPItemText *m_veilText;
    QCPItemRect *m_outline;
    int m_marked = -1;
    int m_veiled = -1;
};

} // namespace atlas
