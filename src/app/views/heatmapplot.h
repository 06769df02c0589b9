#pragma once

#include "viewmodel/viewinput.h"
#include "views/downsample.h"
#include "views/heatmapcolouring.h"
#include "views/heatmappooling.h"
#include "views/heatmaprowmarks.h"
#include "views/heatmapticks.h"
#include "views/heatmapzoom.h"

#include <qcustomplot.h>

#include <functional>
#include <memory>
#include <string>

namespace atlas {

class MaskedCellsLayer;

// A heat map of one matrix (rows = queries, top to bottom; columns = keys, left to right) with a colour bar,
// token labels, a title and a hover tooltip. The matrix is pooled to about the widget's pixel size before
// it is handed to QCustomPlot; axes stay in original indices, so hover and labels always name the original
// cell. −∞ cells are drawn hatched in a colour the map does not use, with a note under the plot. The wheel zooms
// into a window of the matrix, a drag moves it and a double-click shows all; the window is pooled anew.
class HeatmapPlot : public QCustomPlot
{
    Q_OBJECT

public:
    // Tooltip text of original cell (row, col); an empty string shows no tooltip.
    using HoverText = std::function<QString(int row, int col)>;

    struct Cell
    {
        int row = -1;
        int col = -1;
        bool valid() const { return row >= 0 && col >= 0; }
    };

    explicit HeatmapPlot(QWidget *parent = nullptr);

    // data: [rows, cols] row-major; not copied. `owner` keeps it alive (and unchanged) while shown: the plot
    // pools it again when it is resized.
    void setMatrix(const float *data, int rows, int cols, std::shared_ptr<const void> owner = nullptr);
    // What pools a window of a matrix to at most maxRows × maxCols cells; it keeps what it reads alive, and may stop
    // early when `cancel` is set (its result is then dropped).
    using PoolSource = HeatmapPooling::Source;
    // A matrix of rows × cols too large to hold whole (a head computed from its tiles): the plot asks `source` for
    // the picture at its size, on a worker above kPoolOnWorkerCells cells (at once when drawn headless), and again
    // when resized; `whilePooling`, when given, is shown until the first picture is ready.
    void setPooledSource(int rows, int cols, PoolSource source, const QString &whilePooling = {});
    // Masked cells: wherever `maskedScores` ([rows, cols], kept alive by the same owner) is −∞, the cell is drawn in
    // the masked style (grey, hatched) whatever its value; null draws the values only. Call before setMatrix.
    void setMaskedScores(const float *maskedScores) { m_maskedScores = maskedScores; }
    // Cells exactly 0 that are not masked (sparsemax and entmax give them) drawn hatched the other way, with `note`
    // under the plot; an empty note draws them as values. For non-negative matrices: a pooled block is 0 only when
    // each of its cells is.
    void setExactZeroNote(const QString &note) { replaceNotePart(m_zeroNote, note); }
    // What the note under the plot calls the −∞ cells (default "masked (−∞ before softmax)").
    void setMaskedNote(const QString &note) { replaceNotePart(m_maskedNote, note); }
    const QString &exactZeroNote() const { return m_zeroNote; }
    // Axis tick labels; rebuilt only when they (or the room for them) change.
    void setLabels(const QStringList &rowLabels, const QStringList &colLabels);
    // Whether sparse tick labels start with the row/column index ("#40 t"); off when the labels are numbers already.
    void setIndexInLabels(bool on);
    void setTitle(const QString &title);
    void setAxisTitles(const QString &xTitle, const QString &yTitle);
    void setValueLabel(const QString &label); // colour bar label
    void setColormap(const std::string &name); // throws atlas::Error for an unknown name
    void setLogScale(bool log);
    void setTheme(const std::string &theme); // light | dark
    // Mask mode draws the mask itself: every finite cell in one "allowed" colour, −∞ cells dark and hatched.
    void setMaskMode(bool on);
    // Signed values (A − B): the diverging colour map over a range symmetric about 0, whatever the colour map set.
    void setDiverging(bool on);
    // The two entries of the mask mode's legend (default "−∞" and "0"; the Pattern view says "masked", "attended").
    void setMaskLabels(const QString &masked, const QString &allowed);
    void setHoverText(HoverText hover) { m_hover = std::move(hover); }
    // Outlines one row (a query a lesson or a click singles out); −1 outlines none.
    void setMarkedRow(int row)
    {
        m_rowMarks->setMarked(row);
        redrawRowMarks();
    }
    int markedRow() const { return m_rowMarks->marked(); }
    // Covers one row and keeps its values out of the hover text (a predict question's row before Reveal); −1 none.
    void setVeiledRow(int row)
    {
        m_rowMarks->setVeiled(row);
        redrawRowMarks();
    }
    int veiledRow() const { return m_rowMarks->veiled(); }
    // Replaces the heat map with a centred message (e.g. "Not computed yet: step to softmax").
    void showMessage(const QString &text);

    bool showingMessage() const { return m_showingMessage; }
    QString message() const { return m_showingMessage ? m_messageText : QString(); }
    QString title() const { return m_titleText; }
    bool logScale() const { return m_log; }
    bool maskMode() const { return m_maskMode; }
    const std::string &theme() const { return m_theme; }
    QCPColorMap *colorMap() const { return m_map; }
    QCPColorScale *colorScale() const { return m_scale; }
    const Pooled &pooled() const { return m_pooling.pooled(); }
    // A matrix of more than kPoolOnWorkerCells cells with an owner is pooled on a worker (the previous picture
    // stays until it is ready), unless the plot is drawn headless; pooling() says one is under way, and
    // finishPooling() completes it here (exports call it before they draw).
    static constexpr int64_t kPoolOnWorkerCells = HeatmapPooling::kOnWorkerCells;
    bool pooling() const { return m_pooling.pending(); }
    void finishPooling() { m_pooling.finish(); }
    int matrixRows() const { return m_rows; }
    int matrixCols() const { return m_cols; }
    // The cells shown: the whole matrix, or the window the wheel zoomed into and a drag moved (a double-click shows
    // all again). Kept while new matrices of the same size come (another head), reset when the size changes.
    // With the keyboard focus (a click), + and − zoom, the arrows move a zoomed window and 0 shows all.
    CellWindow cellWindow() const { return m_zoom.window(); }
    void setCellWindow(const CellWindow &window);
    bool zoomed() const { return m_zoom.zoomed(); }
    // Zooms by `factor` (< 1 in) keeping original cell (row, col) where it is on screen.
    void zoomAround(int row, int col, double factor);

    // The value drawn for original cell (row, col): the pooled block mean (NaN for −∞), clamped in log scale;
    // in mask mode 0.5 for every allowed cell.
    double displayedValue(int row, int col) const;
    // Original cell under a widget position, or an invalid Cell outside the map.
    Cell cellAt(const QPointF &pos) const;
    // Widget position of the centre of original cell (row, col) (valid after a replot laid the plot out).
    QPointF cellCenter(int row, int col) const;
    QString hoverTextAt(const QPointF &pos) const;

    // What the axes (at least 80 × 60 px), a few tick labels, the colour bar and a two-line title need at the
    // current font size: small, so three plots fit side by side; QCustomPlot's own hint asks for every label.
    QSize minimumSizeHint() const override;
    QSize sizeHint() const override { return {480, 420}; }

protected:
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    bool event(QEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    void buildLayout();
    void applyFonts();
    void applyTheme();
    void applyGradient();
    void applyScaleType();
    CellColouring colouring() const { return {m_maskMode, m_diverging, m_log}; }
    void showSource(int rows, int cols, PoolSource source, bool onWorker);
    void applyWindow();
    void windowChanged(); // the zoom's window moved: pooled anew, the note and the ticks with it
    void repool();
    void adoptPooled();
    void fillColorMap();
    bool updateTicks(); // true when the labels changed (a replot is queued)
    QSize labelRoom() const;
    void updateNote();
    void replaceNotePart(QString &part, const QString &text); // one of the note's parts: the note made again
    void redrawRowMarks();
    void setContentVisible(bool visible);
    void wrapMessage();
    void wrapTexts();
    QSize poolTarget() const;

    QCPTextElement *m_title = nullptr;
    QCPTextElement *m_note = nullptr;
    QCPColorScale *m_scale = nullptr;
    QCPColorMap *m_map = nullptr;
    MaskedCellsLayer *m_masked = nullptr;
    QCPItemText *m_message = nullptr;
    std::unique_ptr<HeatmapRowMarks> m_rowMarks;

    const float *m_maskedScores = nullptr; // for the next setMatrix
    QString m_zeroNote;
    QString m_maskedNote = QStringLiteral("masked (\u2212\u221E before softmax)");
    QString m_maskLabel = QStringLiteral("\u2212\u221E"), m_allowedLabel = QStringLiteral("0");
    int m_rows = 0;
    int m_cols = 0;
    HeatmapZoom m_zoom;

    HeatmapTicks m_ticks;
    int m_retickDepth = 0; // relabellings after a layout since the event loop last ran: stops a see-saw
    std::string m_colormap = "viridis";
    std::string m_theme = "light";
    bool m_log = false;
    bool m_maskMode = false;
    bool m_diverging = false;
    bool m_showingMessage = false;
    QString m_messageText;
    QString m_titleText; // as set; m_title shows it wrapped to the width
    QString m_noteText; // the same for m_note
    HoverText m_hover;
    HeatmapPooling m_pooling {[this] { adoptPooled(); }}; // last: its destructor waits for a pooling under way
};

} // namespace atlas
