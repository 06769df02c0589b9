#pragma once

#include "views/runningrow.h"
#include "views/view.h"

#include "engine/headablation.h"

#include <QString>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class QCPAbstractPlottable;
class QCPAxis;
class QCPAxisRect;
class QCPColorGradient;
class QCPColorMap;
class QCPLegend;
class QCPLayoutGrid;
class QCPTextElement;
class QCustomPlot;
class QLabel;
class QStackedLayout;

namespace atlas {

struct ViewAnalysis;

// A view that draws one analysis result on a plot with a caption under it (the memory sweeps, the inversion error):
// until the result of its settings is there (View::currentAnalysis) it shows why not (the analysis's problem,
// "Measuring…", nothing computed). Subclasses only draw.
class AnalysisPlotView : public View
{
    Q_OBJECT

public:
    QString message() const; // drawn instead of the plot; empty when the plot is drawn
    QString caption() const;
    QString title() const;
    QCustomPlot *plot() const { return m_plot; }
    std::vector<QWidget *> interfaceWidgets() const override;

protected:
    explicit AnalysisPlotView(QWidget *parent = nullptr);

    // What the view says while its analysis runs, and its progress bar's text when the run reports one ("%v of %m
    // points").
    virtual QString pendingText() const;
    virtual QString progressFormat() const;
    // Whether the last drawn result stays on screen while a new one runs, rather than a message, when it is of the same
    // model, an input of the same length and the same settings but those of editedInPlace(): a view whose input the
    // user edits in place keeps its picture, and so does one whose table the user clicks (heads switched off).
    virtual bool keepsResultWhilePending() const { return false; }
    virtual std::vector<std::string> editedInPlace() const { return {}; }
    // A row of controls over the plot, made on first use; hidden on export (interfaceWidgets).
    QWidget *controlRow();

    // The body's row of the axes of panel row `row` (the next holds their legends).
    int bodyRow(int row);
    // An axis rect in row `row`, column `column` of the grid under the title, styled for the theme.
    QCPAxisRect *addAxisRect(int row, int column);
    // A layer × head table in row `row`, column `column` of the grid (head across, layer 0 on top): a colour map of
    // value(layer, head) over [0, top], each cell's text(layer, head) in black or white to stand out from its colour.
    QCPAxisRect *addHeadTable(int row, int column, int layers, int heads, const std::function<double(int, int)> &value,
        double top, const std::function<QString(int, int)> &text);
    // A rows × cols matrix drawn cell by cell in `rect`: value(r, c) at column c of row r, row 0 on top, each cell
    // centred on its integer coordinates, no interpolation and no grid. Its colours are `gradient`'s over [low, high],
    // or over the values' own range when high ≤ low; a NaN cell is drawn as the gradient's NaN handling says.
    static QCPColorMap *addMatrixMap(QCPAxisRect *rect, int rows, int cols,
        const std::function<double(int, int)> &value, const QCPColorGradient &gradient, double low = 0,
        double high = 0);
    // Outlines one head of a table from addHeadTable.
    void outlineHead(QCPAxisRect *table, int layer, int head, const QColor &color);
    // The model's head of a table from addHeadTable under a widget position, if any.
    std::optional<HeadRef> headAt(QCPAxisRect *table, const QPoint &pos) const;
    // A colour scale for `map` in row `row`, column `column` of the grid, its axis styled as `like`'s left axis and
    // named `label`; the column is kept narrow.
    void addColorScale(int row, int column, QCPColorMap *map, QCPAxisRect *like, const QString &label);
    // A line across `rect` at `at` on its left axis (Qt::Horizontal) or bottom axis (Qt::Vertical), clipped to it: a
    // limit, a chance level, the input's own value.
    void addReferenceLine(QCPAxisRect *rect, Qt::Orientation orientation, double at, const QPen &pen);
    // A legend of `entries` under `rect` (an axis rect from addAxisRect), two a row: never over the data.
    QCPLegend *addPanelLegend(QCPAxisRect *rect, const std::vector<QCPAbstractPlottable *> &entries);
    // The axes of a map of blocks by tokens from addMatrixMap, row r being block r + 1 drawn bottom-up: each token's
    // label under its column when there are at most 32 (the map taking two fifths of the plot's width), else
    // positions; the blocks up the side, "after block".
    void setBlockByTokenAxes(QCPAxis *tokens, QCPAxis *blocks, int tokenCount, int layers);
    // A mark's size on such a map: no wider than a token's share of `rect` once laid out, between 3 and 9 px (outlines
    // of 9 px on tokens a pixel apart make one solid band that hides the map).
    static double tokenMarkSize(const QCPAxisRect *rect, int tokenCount);
    // A panel's title, bold on its top axis (which shows nothing else).
    static void setPanelTitle(QCPAxisRect *rect, const QString &text);
    // A legend under the plots of every named plottable, `columns` entries a row, in the theme's colours.
    void addLegend(int columns);
    void setTitle(const QString &text);

private:
    // Whether `result` is of the type the view draws (a tab not yet switched may be handed another view's spec).
    virtual bool drawsResult(const ViewAnalysis &result) const = 0;
    // Fills the plot (cleared: no graphs, items or axis rects beyond the title row) and returns the caption.
    virtual QString draw(const ViewAnalysis &result) = 0;
    void refresh() final;
    // The message instead of the plot; `running`: with the analysis's progress and Cancel under it.
    void showMessage(const QString &text, bool running = false);
    void applyTheme();
    // Whether the last drawn result may stand in for the one under way (keepsResultWhilePending).
    bool keepsShown() const;

    QStackedLayout *m_stack;
    QWidget *m_messagePage; // the message, and the progress and Cancel of a run under way
    QLabel *m_message;
    RunningRow *m_running;
    QWidget *m_page;
    QCustomPlot *m_plot;
    QCPTextElement *m_title;
    QCPLayoutGrid *m_body; // the axis rects, under the title
    QLabel *m_caption;
    QWidget *m_controls = nullptr;
    std::shared_ptr<const ViewAnalysis> m_shown; // the result last drawn, and what it was drawn for
    ViewSpec m_shownSpec;
    std::weak_ptr<const Model> m_shownModel;
    qsizetype m_shownTokens = 0;
};

// An AnalysisPlotView of the result type R (an analysis of view/viewanalysis.h): its subclass draws an R.
template <class R> class ResultPlotView : public AnalysisPlotView
{
protected:
    using AnalysisPlotView::AnalysisPlotView;
    // Fills the plot (cleared: no graphs, items or axis rects beyond the title row) and returns the caption.
    virtual QString draw(const R &result) = 0;

private:
    bool drawsResult(const ViewAnalysis &result) const final { return dynamic_cast<const R *>(&result) != nullptr; }
    QString draw(const ViewAnalysis &result) final { return draw(static_cast<const R &>(result)); }
};

} // namespace atlas
