#include "views/heatmapplot.h"

#include "views/colormapcells.h"
#include "views/colormaps.h"
#include "views/heatmapcolouring.h"
#include "views/heatmapticks.h"
#include "views/maskedcellslayer.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/view.h"
#include "views/viewfonts.h"

#include <QMouseEvent>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <limits>

namespace atlas {

namespace {

constexpr int kMaxPooled = 1024; // never hand QCustomPlot more than this many cells per side
} // namespace

HeatmapPlot::HeatmapPlot(QWidget *parent)
    : QCustomPlot(parent)
{
    setMouseTracking(true);
    setFocusPolicy(Qt::ClickFocus); // the zoom's keys
    setInteractions({});
    setNoAntialiasingOnDrag(true);
    buildLayout();
    applyGradient();
    applyTheme();
    showMessage(QString::fromUtf8(kNothingComputed));
    // The labels are chosen for the room the last layout gave the axes; a new room may hold more or fewer.
    connect(this, &QCustomPlot::afterLayout, this, [this] {
        if (!m_pooling.hasSource() || m_showingMessage || m_retickDepth > 1)
            return;
        ++m_retickDepth;
        const QString title = m_title->text();
        wrapTexts(); // the axes' column may have grown or shrunk
        if (m_title->text() != title)
            replot(rpQueuedReplot);
        updateTicks();
        QMetaObject::invokeMethod(
            this, [this] { m_retickDepth = 0; }, Qt::QueuedConnection);
    });
}

void HeatmapPlot::buildLayout()
{
    plotLayout()->insertRow(0);
    m_title = new QCPTextElement(this, QString());
    plotLayout()->addElement(0, 0, m_title);
    m_scale = new QCPColorScale(this);
    m_scale->setBarWidth(14);
    plotLayout()->addElement(1, 1, m_scale);
    plotLayout()->setColumnStretchFactor(1, 0.01);
    auto *group = new QCPMarginGroup(this);
    axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, group);
    m_scale->setMarginGroup(QCP::msTop | QCP::msBottom, group);
    m_note = new QCPTextElement(this, QString());
    m_note->setVisible(false);

    m_map = new QCPColorMap(xAxis, yAxis);
    m_map->setData(new ColorMapCells(1, 1, QCPRange(0, 1), QCPRange(0, 1)), false);
    m_map->setInterpolate(false);
    m_map->setTightBoundary(false);
    m_map->setColorScale(m_scale);
    m_masked = new MaskedCellsLayer(this);

    m_rowMarks = std::make_unique<HeatmapRowMarks>(this);

    m_message = new QCPItemText(this);
    m_message->setClipToAxisRect(false);
    m_message->position->setType(QCPItemPosition::ptViewportRatio);
    m_message->position->setCoords(0.5, 0.5);
    m_message->setTextAlignment(Qt::AlignCenter);
    m_message->setVisible(false);

    applyFonts();
    for (QCPAxis *axis : {xAxis, yAxis, m_scale->axis()}) {
        axis->grid()->setVisible(false);
        axis->setSubTicks(false);
        axis->setTickLength(0, 4);
    }
    yAxis->setRangeReversed(true); // row 0, the first query, on top
    xAxis->setLabel(QStringLiteral("key"));
    yAxis->setLabel(QStringLiteral("query"));
}

// Every text of the plot at its design size, scaled with the widget's font (the app's zoom).
void HeatmapPlot::applyFonts()
{
    m_title->setFont(sizedFont(font(), 12, true));
    m_note->setFont(sizedFont(font(), 10));
    m_message->setFont(sizedFont(font(), 13));
    for (QCPAxis *axis : {xAxis, yAxis, m_scale->axis()}) {
        axis->setTickLabelFont(sizedFont(font(), 10));
        axis->setLabelFont(sizedFont(font(), 10));
    }
}

void HeatmapPlot::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() != QEvent::FontChange || m_title == nullptr)
        return;
    applyFonts();
    wrapTexts();
    m_ticks.invalidate();
    updateTicks();
    if (m_showingMessage)
        wrapMessage();
    replot(rpQueuedReplot);
}

void HeatmapPlot::applyTheme()
{
    applyPlotTheme(this, m_theme); // the background, the axes and the colour bar's, the title
    const ThemeColors pal = themeColors(m_theme);
    m_note->setTextColor(pal.text); // out of the layout while it is empty
    m_message->setColor(pal.text);
    m_masked->hatch = m_maskMode ? pal.maskedHatch : maskedColor(m_colormap).darker(170);
    // Over the colour of 0 (dark in viridis, light in the sequential maps): the hatch of the other lightness.
    QCPColorGradient gradient = colormap(m_colormap);
    const QColor zero = QColor::fromRgb(gradient.color(0, QCPRange(0, 1)));
    m_masked->zeroHatch = palette::inkOn(zero);
}

void HeatmapPlot::applyGradient()
{
    const QCPColorGradient gradient = cellGradient(m_colormap, colouring(), m_theme);
    m_scale->setGradient(gradient);
    m_map->setGradient(gradient);
}

void HeatmapPlot::setColormap(const std::string &name)
{
    if (name == m_colormap)
        return;
    colormap(name); // validates before anything changes
    m_colormap = name;
    applyGradient();
    applyTheme();
    replot(rpQueuedReplot);
}

void HeatmapPlot::setTheme(const std::string &theme)
{
    if (theme == m_theme)
        return;
    m_theme = theme;
    applyTheme();
    applyGradient();
    replot(rpQueuedReplot);
}

void HeatmapPlot::setLogScale(bool log)
{
    if (log == m_log)
        return;
    m_log = log;
    applyScaleType();
    fillColorMap();
}

void HeatmapPlot::applyScaleType()
{
    setColourBarAxis(*m_scale, colouring(), m_maskLabel, m_allowedLabel);
}

void HeatmapPlot::setMaskLabels(const QString &masked, const QString &allowed)
{
    if (masked == m_maskLabel && allowed == m_allowedLabel)
        return;
    m_maskLabel = masked;
    m_allowedLabel = allowed;
    applyScaleType();
    replot(rpQueuedReplot);
}

void HeatmapPlot::setDiverging(bool on)
{
    if (on == m_diverging)
        return;
    m_diverging = on;
    applyGradient();
    fillColorMap();
}

void HeatmapPlot::setMaskMode(bool on)
{
    if (on == m_maskMode)
        return;
    m_maskMode = on;
    applyScaleType();
    applyGradient();
    applyTheme();
    fillColorMap();
    updateNote();
    setContentVisible(!m_showingMessage);
}

void HeatmapPlot::setTitle(const QString &title)
{
    m_titleText = title;
    wrapTexts();
    replot(rpQueuedReplot);
}

// The title and the note sit over the axes' column only (the colour bar has its own): they are wrapped to that
// column's width.
void HeatmapPlot::wrapTexts()
{
    const int column = axisRect()->outerRect().width() > 40 ? axisRect()->outerRect().width() - 8 : width() - 110;
    m_title->setText(wrappedToWidth(m_titleText, QFontMetrics(m_title->font()), std::max(60, column)));
    m_note->setText(wrappedToWidth(m_noteText, QFontMetrics(m_note->font()), std::max(60, column)));
}

void HeatmapPlot::setAxisTitles(const QString &xTitle, const QString &yTitle)
{
    xAxis->setLabel(xTitle);
    yAxis->setLabel(yTitle);
    replot(rpQueuedReplot);
}

void HeatmapPlot::setValueLabel(const QString &label)
{
    m_scale->setLabel(label);
    replot(rpQueuedReplot);
}

void HeatmapPlot::wrapMessage()
{
    // QCPItemText does not wrap: break the message into lines that fit the widget.
    m_message->setText(wrappedToWidth(m_messageText, QFontMetrics(m_message->font()), std::max(80, width() - 24)));
}

void HeatmapPlot::showMessage(const QString &text)
{
    m_messageText = text;
    wrapMessage();
    m_showingMessage = true;
    m_pooling.clear();
    m_rows = m_cols = 0;
    m_map->data()->clear();
    setContentVisible(false);
    QToolTip::hideText();
    replot(rpQueuedReplot);
}

void HeatmapPlot::setContentVisible(bool visible)
{
    // Not axisRect()->setVisible(false): the message item counts the axis rect as its parent and would hide too.
    xAxis->setVisible(visible);
    yAxis->setVisible(visible);
    m_map->setVisible(visible);
    m_masked->setVisible(visible);
    m_rowMarks->update(m_rows, m_cols, m_theme, visible);
    m_scale->setVisible(visible);
    m_note->setVisible(visible && m_note->layout() != nullptr);
    m_message->setVisible(!visible);
}

void HeatmapPlot::setMatrix(const float *data, int rows, int cols, std::shared_ptr<const void> owner)
{
    const bool onWorker = owner != nullptr;
    showSource(
        rows, cols,
        [data, rows, cols, masked = m_maskedScores, owner = std::move(owner)](int maxRows, int maxCols,
            const CellWindow &window,
            const std::atomic<bool> &) { return downsample(data, rows, cols, window, maxRows, maxCols, masked); },
        onWorker);
}

void HeatmapPlot::setPooledSource(int rows, int cols, PoolSource source, const QString &whilePooling)
{
    showSource(rows, cols, std::move(source), true);
    if (m_pooling.pending() && !whilePooling.isEmpty()) { // the source stays: adoptPooled shows its picture
        m_messageText = whilePooling;
        wrapMessage();
        m_showingMessage = true;
        setContentVisible(false);
    }
}

void HeatmapPlot::showSource(int rows, int cols, PoolSource source, bool onWorker)
{
    m_pooling.setSource(std::move(source), onWorker);
    m_zoom.setMatrixSize(rows, cols);
    m_rows = std::max(0, rows);
    m_cols = std::max(0, cols);
    if (m_showingMessage) {
        m_showingMessage = false;
        setContentVisible(true);
    }
    if (viewport() != rect()) // a hidden plot gets no resize event when its layout sizes it
        setViewport(rect());
    applyWindow();
}

void HeatmapPlot::applyWindow()
{
    const CellWindow w = cellWindow();
    xAxis->setRange(w.col0 - 0.5, w.col0 + w.cols - 0.5);
    yAxis->setRange(w.row0 - 0.5, w.row0 + w.rows - 0.5);
    repool();
    updateTicks();
}

void HeatmapPlot::setCellWindow(const CellWindow &window)
{
    if (m_zoom.setWindow(window))
        windowChanged();
}

void HeatmapPlot::zoomAround(int row, int col, double factor)
{
    if (m_zoom.zoomAround(row, col, factor))
        windowChanged();
}

void HeatmapPlot::windowChanged()
{
    if (m_pooling.hasSource() && !m_showingMessage) {
        applyWindow();
        updateNote(); // which rows and columns
        replot(rpQueuedReplot);
    }
}

void HeatmapPlot::redrawRowMarks()
{
    m_rowMarks->update(m_rows, m_cols, m_theme, !m_showingMessage);
    replot(QCustomPlot::rpQueuedReplot);
}

QSize HeatmapPlot::poolTarget() const
{
    return {std::clamp(width(), 16, kMaxPooled), std::clamp(height(), 16, kMaxPooled)};
}

void HeatmapPlot::repool()
{
    m_pooling.pool(poolTarget(), cellWindow(), int64_t(m_rows) * m_cols, drawnHeadless(QWidget::window()));
}

void HeatmapPlot::adoptPooled()
{
    if (m_showingMessage && m_pooling.hasSource()) { // the message setPooledSource showed while it pooled
        m_showingMessage = false;
        setContentVisible(true);
    }
    fillColorMap();
    updateNote();
}

void HeatmapPlot::fillColorMap()
{
    const CellColouring how = colouring();
    const QCPRange range = colourRange(pooled(), how);
    writeCells(*static_cast<ColorMapCells *>(m_map->data()), pooled(), cellWindow(), range, how); // as installed
    m_map->setDataRange(range);
    replot(rpQueuedReplot);
}

void HeatmapPlot::setLabels(const QStringList &rowLabels, const QStringList &colLabels)
{
    if (!m_ticks.setLabels(rowLabels, colLabels))
        return;
    if (m_showingMessage)
        wrapMessage();
    updateTicks();
}

void HeatmapPlot::setIndexInLabels(bool on)
{
    if (m_ticks.setIndexInLabels(on))
        updateTicks();
}

// The room the axis rect has for labels: as the last layout left it, or (before the first layout) estimated from
// the widget's size.
QSize HeatmapPlot::labelRoom() const
{
    const QRect r = axisRect()->rect();
    if (r.width() > 10 && r.height() > 10)
        return r.size();
    return {std::max(60, width() - 160), std::max(60, height() - 140)};
}

bool HeatmapPlot::updateTicks()
{
    if (!m_ticks.update(xAxis, yAxis, labelRoom(), m_rows, m_cols, cellWindow()))
        return false;
    replot(rpQueuedReplot);
    return true;
}

void HeatmapPlot::replaceNotePart(QString &part, const QString &text)
{
    if (text == part)
        return;
    part = text;
    updateNote();
    replot(rpQueuedReplot);
}

void HeatmapPlot::updateNote()
{
    QStringList notes;
    if (pooled().hasNegInf && !m_maskMode) // in mask mode the colour bar explains the two values
        notes << QStringLiteral("\u25A8 ") + m_maskedNote;
    if (pooled().hasZero && !m_maskMode && !m_zeroNote.isEmpty())
        notes << m_zeroNote;
    if (const QString window = m_zoom.described(); !window.isEmpty())
        notes << window;
    const QString text = notes.join(QStringLiteral(" \u00B7 "));
    m_noteText = text;
    wrapTexts();
    const bool inLayout = m_note->layout() != nullptr;
    if (!text.isEmpty() && !inLayout) {
        plotLayout()->addElement(2, 0, m_note);
    } else if (text.isEmpty() && inLayout) {
        plotLayout()->take(m_note);
        plotLayout()->simplify();
    }
    m_note->setVisible(!text.isEmpty() && !m_showingMessage);
    updateGeometry(); // the minimum height counts the note's lines
}

double HeatmapPlot::displayedValue(int row, int col) const
{
    const Pooled &p = pooled();
    if (row < p.row0 || col < p.col0 || row >= m_rows || col >= m_cols || p.values.empty()
        || (row - p.row0) / p.blockRows >= p.rows || (col - p.col0) / p.blockCols >= p.cols)
        return std::numeric_limits<double>::quiet_NaN();
    return m_map->data()->cell((col - p.col0) / p.blockCols, (row - p.row0) / p.blockRows);
}

HeatmapPlot::Cell HeatmapPlot::cellAt(const QPointF &pos) const
{
    if (m_showingMessage || m_rows == 0 || m_cols == 0 || !axisRect()->rect().contains(pos.toPoint()))
        return {};
    const int col = static_cast<int>(std::floor(xAxis->pixelToCoord(pos.x()) + 0.5));
    const int row = static_cast<int>(std::floor(yAxis->pixelToCoord(pos.y()) + 0.5));
    const CellWindow w = cellWindow();
    if (row < w.row0 || col < w.col0 || row >= w.row0 + w.rows || col >= w.col0 + w.cols)
        return {};
    return {row, col};
}

QPointF HeatmapPlot::cellCenter(int row, int col) const
{
    return {xAxis->coordToPixel(col), yAxis->coordToPixel(row)};
}

QString HeatmapPlot::hoverTextAt(const QPointF &pos) const
{
    const Cell cell = cellAt(pos);
    if (!cell.valid() || !m_hover)
        return {};
    if (cell.row == m_rowMarks->veiled())
        return tr("Query %1's weights are hidden until Reveal").arg(cell.row);
    QString text = m_hover(cell.row, cell.col);
    if (!text.isEmpty() && (pooled().blockRows > 1 || pooled().blockCols > 1))
        text += tr("\n(drawn as the mean of a %1\u00D7%2 block: the wheel zooms in)")
                    .arg(pooled().blockRows)
                    .arg(pooled().blockCols);
    return text;
}

QSize HeatmapPlot::minimumSizeHint() const
{
    const QFontMetrics fm(sizedFont(font(), 10));
    const int axes = 14 * fm.averageCharWidth() + 2 * fm.height(); // tick labels and the axis titles
    // The title's and the note's lines at the width the plot has now (a two-line title at least).
    int texts = std::max(2 * QFontMetrics(sizedFont(font(), 12)).height(),
        static_cast<QCPLayoutElement *>(m_title)->minimumOuterSizeHint().height());
    if (m_note->visible())
        texts += static_cast<QCPLayoutElement *>(m_note)->minimumOuterSizeHint().height();
    return {80 + axes + 14 + 7 * fm.averageCharWidth(), 60 + axes + texts};
}

void HeatmapPlot::resizeEvent(QResizeEvent *event)
{
    QCustomPlot::resizeEvent(event);
    if (m_pooling.hasSource() && !m_showingMessage) {
        const QSize target = poolTarget();
        const CellWindow w = cellWindow();
        if (poolBlock(w.rows, target.height()) != pooled().blockRows
            || poolBlock(w.cols, target.width()) != pooled().blockCols)
            repool();
    }
    if (m_showingMessage)
        wrapMessage();
    wrapTexts();
    m_ticks.invalidate();
    updateTicks();
    if (m_note->visible()) // a narrower plot may wrap the note to more lines
        updateGeometry();
}

void HeatmapPlot::mouseMoveEvent(QMouseEvent *event)
{
    QCustomPlot::mouseMoveEvent(event);
    if (m_zoom.dragging()) { // the window follows the pointer
        if (m_zoom.dragTo(event->position(), axisRect()->rect().size()))
            windowChanged();
        return;
    }
    const QString text = hoverTextAt(event->position());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void HeatmapPlot::wheelEvent(QWheelEvent *event)
{
    const Cell cell = cellAt(event->position());
    const int steps = event->angleDelta().y() / 120;
    if (!cell.valid() || steps == 0) {
        QCustomPlot::wheelEvent(event);
        return;
    }
    zoomAround(cell.row, cell.col, std::pow(HeatmapZoom::kStep, steps)); // a notch up zooms in
    event->accept();
}

void HeatmapPlot::mousePressEvent(QMouseEvent *event)
{
    QCustomPlot::mousePressEvent(event);
    if (event->button() == Qt::LeftButton && zoomed() && cellAt(event->position()).valid()) {
        m_zoom.startDrag(event->position());
        setCursor(Qt::ClosedHandCursor);
    }
}

void HeatmapPlot::mouseReleaseEvent(QMouseEvent *event)
{
    QCustomPlot::mouseReleaseEvent(event);
    if (m_zoom.dragging()) {
        m_zoom.endDrag();
        unsetCursor();
    }
}

void HeatmapPlot::mouseDoubleClickEvent(QMouseEvent *event)
{
    QCustomPlot::mouseDoubleClickEvent(event);
    if (m_zoom.showAll())
        windowChanged();
}

void HeatmapPlot::keyPressEvent(QKeyEvent *event)
{
    if (!m_zoom.takesKey(*event))
        return QCustomPlot::keyPressEvent(event);
    if (m_zoom.press(*event))
        windowChanged();
    event->accept();
}

bool HeatmapPlot::event(QEvent *event)
{
    // The zoom's keys go to the focused plot rather than to a shortcut of the window (the lessons' arrows)
    if (event->type() == QEvent::ShortcutOverride && m_pooling.hasSource() && !m_showingMessage
        && m_zoom.takesKey(*static_cast<QKeyEvent *>(event))) {
        event->accept();
        return true;
    }
    return QCustomPlot::event(event);
}

void HeatmapPlot::leaveEvent(QEvent *event)
{
    QToolTip::hideText();
    QCustomPlot::leaveEvent(event);
}

} // namespace atlas
