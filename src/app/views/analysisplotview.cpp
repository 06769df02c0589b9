#include "views/analysisplotview.h"

#include "view/viewanalysis.h"
#include "views/colormaps.h"
#include "views/heatmapticks.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/plottitle.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedLayout>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace atlas {

AnalysisPlotView::AnalysisPlotView(QWidget *parent)
    : View(parent)
    , m_stack(new QStackedLayout(this))
    , m_messagePage(new QWidget(this))
    , m_message(newMessageLabel())
    , m_running(new RunningRow(
          this, QString(), tr("Stop the run; change a setting or the input to run it again"), m_messagePage))
    , m_page(new QWidget(this))
    , m_plot(new QCustomPlot(m_page))
    , m_title(nullptr)
    , m_body(nullptr)
    , m_caption(new QLabel(m_page))
{
    m_caption->setWordWrap(true);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_caption->setMargin(6);
    auto *column = new QVBoxLayout(m_page);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(m_plot, 1);
    column->addWidget(m_caption);
    m_plot->setMinimumSize(320, 240);
    m_plot->setAutoAddPlottableToLegend(false); // every legend names its entries (a first inset legend would take all)
    auto *messageColumn = new QVBoxLayout(m_messagePage);
    messageColumn->addWidget(m_message, 1);
    messageColumn->addWidget(m_running);
    messageColumn->addStretch(1);
    m_stack->addWidget(m_messagePage);
    m_stack->addWidget(m_page);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString AnalysisPlotView::message() const
{
    return m_stack->currentWidget() == m_messagePage ? m_message->text() : QString();
}

QString AnalysisPlotView::caption() const
{
    return m_stack->currentWidget() == m_page ? m_caption->text() : QString();
}

QString AnalysisPlotView::title() const
{
    return m_title ? m_title->text() : QString();
}

void AnalysisPlotView::showMessage(const QString &text, bool running)
{
    m_message->setFont(sizedFont(font(), 12));
    setMessageText(m_message, text);
    m_running->setVisible(running);
    if (running) { // steps done of those reported, or a busy bar while the run reports none
        const AnalysisState &a = m_input.analysis;
        m_running->setProgress(a.done, a.total);
        m_running->bar()->setFormat(a.total > 0 ? progressFormat() : QString());
    }
    m_stack->setCurrentWidget(m_messagePage);
}

QString AnalysisPlotView::progressFormat() const
{
    return tr("%v of %m");
}

void AnalysisPlotView::applyTheme()
{
    applyPlotTheme(m_plot, m_spec.theme); // the pages around it take the view's palette (View::setSpec)
}

void AnalysisPlotView::refresh()
{
    layOutHidden(this);
    applyTheme();
    std::shared_ptr<const ViewAnalysis> result;
    if (currentAnalysis<ViewAnalysis>() && drawsResult(*m_input.analysis.result))
        result = m_input.analysis.result;
    else if (m_input.analysis.pending && keepsShown())
        result = m_shown;
    if (!result) {
        if (!m_input.analysis.problem.isEmpty())
            return showMessage(m_input.analysis.problem);
        if (!m_input.trace)
            return showMessage(QString::fromUtf8(kNothingComputed));
        return showMessage(pendingText(), m_input.analysis.pending);
    }
    if (result != m_shown) {
        m_shown = result;
        m_shownSpec = m_spec;
        m_shownModel = m_input.model;
        m_shownTokens = m_input.tokens.size();
    }
    m_plot->clearItems();
    m_plot->clearGraphs();
    m_plot->clearPlottables();
    m_plot->plotLayout()->clear();
    m_title = new PlotTitle(m_plot, QString(), sizedFont(font(), 12, true));
    m_title->setTextColor(themeColors(m_spec.theme).text);
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_body = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 0, m_body);
    m_caption->setFont(sizedFont(font(), 10));
    const QString caption = draw(*result);
    m_caption->setText(result == m_input.analysis.result
            ? caption
            : tr("Computing the result of the new settings; until it comes, this is the last one. %1").arg(caption));
    if (m_controls)
        m_controls->setFont(font());
    m_stack->setCurrentWidget(m_page);
    m_plot->replot(drawnHeadless(this) ? QCustomPlot::rpImmediateRefresh : QCustomPlot::rpQueuedReplot);
}

bool AnalysisPlotView::keepsShown() const
{
    if (!keepsResultWhilePending() || !m_shown || !m_input.model || m_shownModel.lock() != m_input.model
        || m_shownTokens != m_input.tokens.size())
        return false;
    const std::vector<std::string> edited = editedInPlace();
    return analysisSettings(m_shownSpec, edited) == analysisSettings(m_spec, edited);
}

QString AnalysisPlotView::pendingText() const
{
    return tr("Measuring… training steps of the model's shape");
}

QWidget *AnalysisPlotView::controlRow()
{
    if (!m_controls) {
        m_controls = new QWidget(m_page);
        auto *row = new QHBoxLayout(m_controls);
        row->setContentsMargins(6, 2, 6, 2);
        static_cast<QVBoxLayout *>(m_page->layout())->insertWidget(0, m_controls);
    }
    return m_controls;
}

std::vector<QWidget *> AnalysisPlotView::interfaceWidgets() const
{
    if (m_controls)
        return {m_controls, m_running};
    return {m_running};
}

void AnalysisPlotView::setTitle(const QString &text)
{
    if (m_title)
        m_title->setText(text);
}

// A row of panels is two rows of the body: the axes, and under them their legends when they have one (addPanelLegend),
// a row that takes no height while it is empty.
int AnalysisPlotView::bodyRow(int row)
{
    for (int r = m_body->rowCount(); r <= 2 * row + 1; ++r) {
        m_body->insertRow(r);
        m_body->setRowStretchFactor(r, r % 2 ? 0.001 : 1.0);
    }
    return 2 * row;
}

QCPAxisRect *AnalysisPlotView::addAxisRect(int row, int column)
{
    auto *rect = new QCPAxisRect(m_plot);
    m_body->addElement(bodyRow(row), column, rect);
    applyAxisRectTheme(rect, m_spec.theme, font());
    return rect;
}

QCPColorMap *AnalysisPlotView::addMatrixMap(QCPAxisRect *rect, int rows, int cols,
    const std::function<double(int, int)> &value, const QCPColorGradient &gradient, double low, double high)
{
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    auto *map = new QCPColorMap(x, y);
    map->data()->setSize(cols, rows);
    // QCustomPlot centres the first and last cells on the range's ends, and spreads a single cell over the range.
    const auto span = [](int n) { return n > 1 ? QCPRange(0, n - 1) : QCPRange(-0.5, 0.5); };
    map->data()->setRange(span(cols), span(rows));
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            map->data()->setCell(c, r, value(r, c));
    map->setGradient(gradient);
    map->setInterpolate(false);
    if (high > low)
        map->setDataRange(QCPRange(low, high));
    else
        map->rescaleDataRange(true);
    x->setRange(-0.5, cols - 0.5);
    y->setRange(-0.5, rows - 0.5);
    y->setRangeReversed(true);
    x->grid()->setVisible(false);
    y->grid()->setVisible(false);
    return map;
}

QCPAxisRect *AnalysisPlotView::addHeadTable(int row, int column, int layers, int heads,
    const std::function<double(int, int)> &value, double top, const std::function<QString(int, int)> &text)
{
    QCPAxisRect *table = addAxisRect(row, column);
    QCPAxis *x = table->axis(QCPAxis::atBottom), *y = table->axis(QCPAxis::atLeft);
    addMatrixMap(table, layers, heads, value, colormap(m_spec.colormap), 0, top);
    const QFont cellFont = sizedFont(font(), layers * heads > 48 ? 7 : 9);
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) {
            auto *label = new QCPItemText(m_plot);
            label->setClipAxisRect(table);
            label->position->setAxes(x, y);
            label->position->setCoords(h, l);
            label->setFont(cellFont);
            label->setText(text(l, h));
            label->setColor(palette::inkOn(colormap(m_spec.colormap).color(value(l, h), QCPRange(0, top))));
        }
    auto headTicks = QSharedPointer<QCPAxisTickerText>::create(),
         layerTicks = QSharedPointer<QCPAxisTickerText>::create();
    for (int h = 0; h < heads; ++h)
        headTicks->addTick(h, QString::number(h));
    for (int l = 0; l < layers; ++l)
        layerTicks->addTick(l, QString::number(l));
    x->setTicker(headTicks);
    y->setTicker(layerTicks);
    x->setLabel(tr("head"));
    y->setLabel(tr("layer"));
    return table;
}

void AnalysisPlotView::outlineHead(QCPAxisRect *table, int layer, int head, const QColor &color)
{
    QCPAxis *x = table->axis(QCPAxis::atBottom), *y = table->axis(QCPAxis::atLeft);
    auto *outline = new QCPItemRect(m_plot);
    outline->setClipAxisRect(table);
    outline->topLeft->setAxes(x, y);
    outline->bottomRight->setAxes(x, y);
    outline->topLeft->setCoords(head - 0.46, layer - 0.46);
    outline->bottomRight->setCoords(head + 0.46, layer + 0.46);
    outline->setPen(QPen(color, 3));
}

std::optional<HeadRef> AnalysisPlotView::headAt(QCPAxisRect *table, const QPoint &pos) const
{
    if (!table || !m_input.model || !table->rect().contains(pos))
        return std::nullopt;
    const int head = int(std::lround(table->axis(QCPAxis::atBottom)->pixelToCoord(pos.x())));
    const int layer = int(std::lround(table->axis(QCPAxis::atLeft)->pixelToCoord(pos.y())));
    if (head < 0 || head >= m_input.model->config.heads || layer < 0 || layer >= m_input.model->config.layers)
        return std::nullopt;
    return HeadRef {layer, head};
}

void AnalysisPlotView::addColorScale(int row, int column, QCPColorMap *map, QCPAxisRect *like, const QString &label)
{
    auto *scale = new QCPColorScale(m_plot);
    scale->setBarWidth(12);
    m_body->addElement(bodyRow(row), column, scale);
    m_body->setColumnStretchFactor(column, 0.01);
    // A colour map joining a scale takes the scale's gradient and range: hand the scale the map's own first.
    scale->setGradient(map->gradient());
    scale->setDataRange(map->dataRange());
    map->setColorScale(scale);
    auto *group = new QCPMarginGroup(m_plot);
    like->setMarginGroup(QCP::msTop | QCP::msBottom, group);
    scale->setMarginGroup(QCP::msTop | QCP::msBottom, group);
    const QCPAxis *from = like->axis(QCPAxis::atLeft);
    QCPAxis *to = scale->axis();
    to->setBasePen(from->basePen());
    to->setTickPen(from->tickPen());
    to->setSubTickPen(from->subTickPen());
    to->setTickLabelColor(from->tickLabelColor());
    to->setTickLabelFont(from->tickLabelFont());
    to->setLabelColor(from->labelColor());
    to->setLabelFont(from->labelFont());
    to->setLabel(label);
}

void AnalysisPlotView::addReferenceLine(QCPAxisRect *rect, Qt::Orientation orientation, double at, const QPen &pen)
{
    auto *line = new QCPItemStraightLine(m_plot);
    line->setClipAxisRect(rect);
    for (QCPItemPosition *p : {line->point1, line->point2}) {
        p->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
        p->setAxisRect(rect);
    }
    const bool across = orientation == Qt::Horizontal;
    line->point1->setCoords(across ? 0 : at, across ? at : 0);
    line->point2->setCoords(across ? 1 : at, across ? at : 1);
    line->setPen(pen);
}

QCPLegend *AnalysisPlotView::addPanelLegend(QCPAxisRect *rect, const std::vector<QCPAbstractPlottable *> &entries)
{
    auto *legend = new QCPLegend;
    for (int i = 0; i < m_body->elementCount(); ++i)
        if (m_body->elementAt(i) == rect) {
            int row = 0, column = 0;
            m_body->indexToRowCol(i, row, column);
            m_body->addElement(row + 1, column, legend);
        }
    legend->setLayer(QStringLiteral("legend"));
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(entries.size() <= 2 ? int(entries.size()) : 2);
    const ThemeColors colors = themeColors(m_spec.theme);
    legend->setBrush(colors.background);
    legend->setBorderPen(Qt::NoPen);
    legend->setTextColor(colors.text);
    legend->setFont(sizedFont(font(), 9));
    for (QCPAbstractPlottable *entry : entries)
        entry->addToLegend(legend);
    return legend;
}

double AnalysisPlotView::tokenMarkSize(const QCPAxisRect *rect, int tokenCount)
{
    return std::clamp(rect->width() / double(std::max(1, tokenCount)), 3.0, 9.0);
}

void AnalysisPlotView::setBlockByTokenAxes(QCPAxis *tokens, QCPAxis *blocks, int tokenCount, int layers)
{
    if (tokenCount <= 32) {
        // Labelled again for the map's own width once the plot is laid out: before it, the plot may not have its size.
        const QStringList labels = tokenLabels(m_input, tokenCount);
        const auto label = [tokens, labels, tokenCount](int pixels) {
            setTokenTicks(tokens, labels, tokenCount, std::max(100, pixels), true, false);
        };
        label(plot()->width() * 2 / 5);
        connect(plot(), &QCustomPlot::afterLayout, tokens->axisRect(),
            [label, rect = QPointer<QCPAxisRect>(tokens->axisRect())] {
                if (rect)
                    label(rect->width());
            });
        tokens->setLabel(tr("token"));
    } else {
        tokens->setLabel(tr("position"));
    }
    auto blockTicks = QSharedPointer<QCPAxisTickerText>::create();
    for (int block = 1; block <= layers; block += std::max(1, layers / 12))
        blockTicks->addTick(block - 1, QString::number(block));
    blocks->setTicker(blockTicks);
    blocks->setRangeReversed(false);
    blocks->setLabel(tr("after block"));
}

void AnalysisPlotView::setPanelTitle(QCPAxisRect *rect, const QString &text)
{
    QCPAxis *top = rect->axis(QCPAxis::atTop);
    top->setVisible(true);
    top->setTicks(false);
    top->setTickLabels(false);
    top->setBasePen(Qt::NoPen);
    top->setLabel(text);
    const QCPAxis *left = rect->axis(QCPAxis::atLeft);
    top->setLabelColor(left->labelColor());
    QFont bold = left->labelFont();
    bold.setBold(true);
    top->setLabelFont(bold);
}

void AnalysisPlotView::addLegend(int columns)
{
    const ThemeColors colors = themeColors(m_spec.theme);
    auto *legend = new QCPLegend;
    m_plot->plotLayout()->addElement(2, 0, legend);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
    legend->setLayer(QStringLiteral("legend"));
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(columns);
    legend->setBrush(colors.background);
    legend->setBorderPen(Qt::NoPen);
    legend->setTextColor(colors.text);
    legend->setFont(sizedFont(font(), 9));
    for (int i = 0; i < m_plot->plottableCount(); ++i)
        if (!m_plot->plottable(i)->name().isEmpty())
            m_plot->plottable(i)->addToLegend(legend);
}

} // namespace atlas
