#pragma once

#include "views/view.h"

#include "engine/headablation.h"

#include <QString>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QCPAbstractPlottable;
class QCPAxisRect;
class QCPColorMap;
class QCPLegend;
class QCPLayoutGrid;
class QCPTextElement;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QStackedLayout;

namespace atlas {

struct ViewAnalysis;

// A view that draws one analysis result on a plot with a caption under it (the memory sweeps, the inversion error):
// until the result is there it shows why not (the analysis's problem, "Measuring…", nothing computed), and a result
// the session still holds from older settings waits for the new one. Subclasses only draw.
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

    // Whether `result` is this view's, for the spec on screen.
    virtual bool isCurrent(const ViewAnalysis &result) const = 0;
    // For views that draw one head's picture: whether `result` is an Analysis whose picture is of the input on
    // screen, at the spec's layer and head.
    template <typename Analysis> bool picturesThisHead(const ViewAnalysis &result) const
    {
        const auto *a = dynamic_cast<const Analysis *>(&result);
        return a && m_input.model && int64_t(a->picture.tokens.size()) == m_input.tokens.size()
            && a->picture.layer == m_spec.layer && a->picture.head == std::max(m_spec.head, 0);
    }
    // Fills the plot (cleared: no graphs, items or axis rects beyond the title row) and returns the caption.
    virtual QString draw(const ViewAnalysis &result) = 0;
    // What the view says while its analysis runs, and its progress bar's text when the run reports one ("%v of %m
    // points").
    virtual QString pendingText() const;
    virtual QString progressFormat() const;
    // Whether the last drawn result stays on screen while a new one runs (when it is still current): a view the
    // user edits in place (switching heads) keeps its picture rather than flash a message.
    virtual bool keepsResultWhilePending() const { return false; }
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
    // A panel's title, bold on its top axis (which shows nothing else).
    static void setPanelTitle(QCPAxisRect *rect, const QString &text);
    // A legend under the plots of every named plottable, `columns` entries a row, in the theme's colours.
    void addLegend(int columns);
    void setTitle(const QString &text);

private:
    void refresh() final;
    // The message instead of the plot; `running`: with the analysis's progress and Cancel under it.
    void showMessage(const QString &text, bool running = false);
    void applyTheme();

    QStackedLayout *m_stack;
    QWidget *m_messagePage; // the message, and the progress and Cancel of a run under way
    QLabel *m_message;
    QWidget *m_running;
    QProgressBar *m_progress;
    QWidget *m_page;
    QCustomPlot *m_plot;
    QCPTextElement *m_title;
    QCPLayoutGrid *m_body; // the axis rects, under the title
    QLabel *m_caption;
    QWidget *m_controls = nullptr;
    std::shared_ptr<const ViewAnalysis> m_shown; // the result last drawn
};

} // namespace atlas
