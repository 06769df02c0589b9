#include "memorytimeline/memorytimelineview.h"
#include "memorytimeline/memorytimeline.h"

#include "view/memoryanalysis.h"
#include "views/byteunits.h"
#include "views/heatmapplot.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/plottitle.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <QKeyEvent>
#include <QLabel>
#include <QStackedLayout>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

// Bottom to top of the stack: what lives all step long first, then what comes and goes.
const MemoryCategory kStackOrder[kMemoryCategories]
    = {MemoryCategory::Parameters, MemoryCategory::OptimizerState, MemoryCategory::Gradients,
        MemoryCategory::StoredActivations, MemoryCategory::RecomputedActivations, MemoryCategory::Workspace};

QColor categoryColor(MemoryCategory c, bool dark)
{
    // Okabe and Ito's colour-blind-safe palette, in MemoryCategory's order: parameters grey, gradients reddish purple,
    // optimizer state sky blue, stored activations bluish green, recomputed orange, workspace vermillion. Gradients and
    // recomputed activations, both of the backward pass, differ in hue and lightness for every kind of colour vision.
    using namespace palette;
    static const QColor light[kMemoryCategories]
        = {okabeGrey, okabePink, okabeSkyBlue, okabeGreen, okabeOrange, okabeVermillion};
    QColor color = light[int(c)];
    return dark ? color.lighter(115) : color;
}

QColor phaseColor(MemoryPhase p, bool dark)
{
    QColor c;
    switch (p) {
    case MemoryPhase::Forward:
        c = palette::tableauBlue;
        break;
    case MemoryPhase::Backward:
        c = palette::tableauOrange;
        break;
    case MemoryPhase::Recompute:
        c = palette::tableauPurple;
        break;
    case MemoryPhase::Optimizer:
        c = palette::tableauGreen;
        break;
    case MemoryPhase::Setup:
        return Qt::transparent;
    }
    c.setAlpha(dark ? 50 : 32);
    return c;
}

bool inScope(MemoryCategory c, const std::string &scope)
{
    return scope != "activations" || isActivation(c);
}

// The top of the stack drawn at `point`: every live byte, or the activations' alone.
double stackTop(const TimelineStrategy &s, int point, const std::string &scope)
{
    return double(scope == "activations" ? s.activationBytesAt(point) : s.liveBytesAt(point));
}

} // namespace

MemoryTimelineView::MemoryTimelineView(QWidget *parent)
    : View(parent)
    , m_stack(new QStackedLayout(this))
    , m_message(newMessageLabel())
    , m_plot(new QCustomPlot(this))
{
    m_stack->addWidget(m_message);
    m_stack->addWidget(m_plot);
    setFocusPolicy(Qt::StrongFocus);
    connect(m_plot, &QCustomPlot::mousePress, this, &MemoryTimelineView::moveCursorTo);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent *event) {
        if (event->buttons() & Qt::LeftButton)
            moveCursorTo(event);
    });
    showMessage(tr("Nothing to show yet: run the model"));
}

QSize MemoryTimelineView::minimumSizeHint() const
{
    const int line = QFontMetrics(sizedFont(font(), 10)).height();
    return {48 * line, 3 * 12 * line + 8 * line};
}

QString MemoryTimelineView::message() const
{
    return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

QString MemoryTimelineView::peakLabel(int row) const
{
    return row >= 0 && row < int(m_peakLabels.size()) && m_peakLabels[size_t(row)] ? m_peakLabels[size_t(row)]->label()
                                                                                   : QString();
}

QString MemoryTimelineView::cursorLabel(int row) const
{
    return row >= 0 && row < int(m_cursorTexts.size()) ? m_cursorTexts[size_t(row)] : QString();
}

QString MemoryTimelineView::title() const
{
    return m_title ? m_title->text() : QString();
}

void MemoryTimelineView::showMessage(const QString &text)
{
    m_drawn.reset();
    m_message->setFont(sizedFont(font(), 12));
    setMessageText(m_message, text);
    m_stack->setCurrentWidget(m_message);
}

void MemoryTimelineView::applyTheme()
{
    applyPlotTheme(m_plot, m_spec.theme); // the message page takes the view's palette (View::setSpec)
}

void MemoryTimelineView::refresh()
{
    layOutHidden(this);
    applyTheme();
    const auto &result = m_input.analysis.result;
    const auto *analysis = currentAnalysis<MemoryTimelineAnalysis>();
    if (!analysis) {
        if (!m_input.analysis.problem.isEmpty())
            return showMessage(m_input.analysis.problem);
        return showMessage(m_input.trace ? tr("Computing… one training step under each memory strategy")
                                         : tr("Nothing to show yet: run the model"));
    }
    m_drawn = std::static_pointer_cast<const MemoryTimelineAnalysis>(result);
    draw(*analysis); // every refresh: the scope, theme or zoom may have changed (moving the cursor does not refresh)
    m_stack->setCurrentWidget(m_plot);
    m_plot->replot(drawnHeadless(this) ? QCustomPlot::rpImmediateRefresh : QCustomPlot::rpQueuedReplot);
}

void MemoryTimelineView::draw(const MemoryTimelineAnalysis &analysis)
{
    const MemoryTimeline &t = analysis.timeline;
    const ThemeColors colors = themeColors(m_spec.theme);
    m_plot->clearItems();
    m_plot->clearGraphs();
    m_plot->plotLayout()->clear(); // the default axis rect and legend go too
    m_rects.clear();
    m_peakLabels.clear();
    m_cursorAxes.clear();
    m_cursorTexts.clear();
    m_cursorLines.clear();
    int64_t residentBytes = 0;
    for (const TimelineStrategy &strategy : t.strategies)
        residentBytes = std::max(residentBytes, strategy.peakResidentBytes);
    const QString shape = t.encoderLayers > 0 ? tr("%1 source and %2 target tokens, %3 encoder and %4 decoder layers")
                                                    .arg(t.sourceTokens)
                                                    .arg(t.tokens)
                                                    .arg(t.encoderLayers)
                                                    .arg(t.layers)
                                              : tr("%1 tokens, %2 layers").arg(t.tokens).arg(t.layers);
    // Checkpointing's k is in its row's label; the feed-forward's chunks only when there are several.
    m_title = new PlotTitle(m_plot,
        tr("One training step of %1: live memory by category%2; the process's peak RSS %3")
            .arg(shape)
            .arg(analysis.ffnChunks > 1 ? tr(", the feed-forward in %1 chunks").arg(analysis.ffnChunks) : QString())
            .arg(residentBytes > 0 ? byteAmount(double(residentBytes)) : tr("unknown")),
        sizedFont(font(), 12, true));
    m_title->setTextColor(colors.text);
    m_plot->plotLayout()->addElement(0, 0, m_title);
    const bool activationsOnly = m_spec.get(views::memorytimeline::kMemoryScope) == "activations";
    const double maxBytes = std::max<double>(double(activationsOnly ? t.maxActivationBytes : t.maxBytes), 1.0);
    for (size_t i = 0; i < t.strategies.size(); ++i) {
        auto *rect = new QCPAxisRect(m_plot);
        m_plot->plotLayout()->addElement(int(i) + 1, 0, rect);
        m_rects.push_back(rect);
        drawStrategy(rect, t.strategies[i], maxBytes);
    }
    auto *legend = new QCPLegend;
    m_plot->plotLayout()->addElement(int(t.strategies.size()) + 1, 0, legend);
    legend->setLayer(QStringLiteral("legend"));
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(3);
    legend->setBrush(colors.background);
    legend->setBorderPen(Qt::NoPen);
    legend->setTextColor(colors.text);
    legend->setFont(sizedFont(font(), 10));
    m_plot->plotLayout()->setRowStretchFactor(int(t.strategies.size()) + 1, 0.001);
    const int stacked = activationsOnly ? 3 : kMemoryCategories; // graphs per strategy
    for (int c = stacked - 1; c >= 0 && m_plot->graphCount() >= stacked; --c)
        m_plot->graph(c)->addToLegend(legend); // the first strategy's graphs, top of the stack first
    drawCursor();
}

void MemoryTimelineView::drawStrategy(QCPAxisRect *rect, const TimelineStrategy &s, double maxBytes)
{
    const bool dark = m_spec.theme == "dark";
    const ThemeColors colors = themeColors(m_spec.theme);
    const ByteUnit unit = byteUnitFor(maxBytes);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    applyAxisRectTheme(rect, m_spec.theme, font());
    const int maxOps = m_drawn ? std::max(1, m_drawn->timeline.maxOps) : 1;
    x->setRange(-0.5, maxOps - 0.5);
    y->setRange(0, maxBytes / unit.divisor * 1.3); // room above the stack for the peak's marker
    y->setLabel(QString::fromStdString(s.label) + QLatin1Char('\n') + unit.name);
    x->setLabel(tr("op of the step"));
    if (!s.problem.empty()) {
        auto *text = new QCPItemText(m_plot);
        text->setClipAxisRect(rect);
        text->position->setAxisRect(rect);
        text->position->setType(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(0.5, 0.5);
        text->setText(QString::fromStdString(s.problem));
        text->setColor(colors.text);
        text->setFont(sizedFont(font(), 10));
        m_peakLabels.push_back(nullptr);
        auto *line = new QCPItemStraightLine(m_plot);
        line->setVisible(false);
        m_cursorLines.push_back(line);
        m_cursorAxes.push_back(x);
        m_cursorTexts.push_back({});
        return;
    }
    for (const TimelinePhase &p : s.phases) {
        const QColor fill = phaseColor(p.phase, dark);
        if (fill.alpha() == 0)
            continue;
        auto *band = new QCPItemRect(m_plot);
        band->setLayer(QStringLiteral("grid"));
        band->setClipAxisRect(rect);
        for (QCPItemPosition *corner : {band->topLeft, band->bottomRight}) {
            corner->setAxisRect(rect);
            corner->setAxes(x, y);
            corner->setTypeY(QCPItemPosition::ptAxisRectRatio);
        }
        band->topLeft->setCoords(p.firstOp - 0.5, 0);
        band->bottomRight->setCoords(p.endOp - 0.5, 1);
        band->setPen(Qt::NoPen);
        band->setBrush(fill);
        if (double(p.endOp - p.firstOp) >= 0.08 * maxOps) {
            auto *name = new QCPItemText(m_plot);
            name->setClipAxisRect(rect);
            name->position->setAxisRect(rect);
            name->position->setAxes(x, y);
            name->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            name->position->setCoords(0.5 * (p.firstOp + p.endOp) - 0.5, 0.97);
            name->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
            name->setText(QString::fromLatin1(phaseName(p.phase)));
            name->setColor(colors.text);
            name->setFont(sizedFont(font(), 9));
        }
    }
    const QVector<double> keys(s.x.begin(), s.x.end());
    QVector<double> stack(keys.size(), 0.0);
    QCPGraph *below = nullptr;
    for (MemoryCategory c : kStackOrder) {
        if (!inScope(c, m_spec.get(views::memorytimeline::kMemoryScope)))
            continue;
        const std::vector<double> &values = s.live[size_t(c)];
        for (int i = 0; i < stack.size(); ++i)
            stack[i] += values[size_t(i)] / unit.divisor;
        QCPGraph *g = m_plot->addGraph(x, y);
        g->setName(QString::fromLatin1(categoryName(c)));
        g->setData(keys, stack, true);
        g->setLineStyle(QCPGraph::lsStepLeft);
        const QColor color = categoryColor(c, dark);
        g->setPen(QPen(color.darker(120), 1));
        QColor fill = color;
        fill.setAlpha(200);
        g->setBrush(fill);
        if (below)
            g->setChannelFillGraph(below);
        below = g;
    }
    // The peak: a marker at the point, and what was live there above the panel (never over the data or the cursor).
    QCPAxis *label = rect->axis(QCPAxis::atTop);
    m_peakLabels.push_back(label);
    const bool activationsOnly = m_spec.get(views::memorytimeline::kMemoryScope) == "activations";
    const int peak = activationsOnly ? s.peakActivationPoint : s.peakPoint;
    if (peak >= 0) {
        const double px = s.x[size_t(peak)],
                     py = stackTop(s, peak, m_spec.get(views::memorytimeline::kMemoryScope)) / unit.divisor;
        const CategoryBytes atPeak = s.liveAt(peak);
        const MemoryOp &op = s.ops[size_t(int(px))];
        auto *marker = new QCPItemText(m_plot);
        marker->setClipToAxisRect(false); // at a small height it may reach into the margin above
        marker->position->setAxisRect(rect);
        marker->position->setAxes(x, y);
        marker->position->setCoords(px, py);
        marker->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
        marker->setText(QStringLiteral("▼ peak"));
        marker->setColor(colors.text);
        marker->setFont(sizedFont(font(), 9, true));
        label->setVisible(true);
        label->setTicks(false);
        label->setTickLabels(false);
        label->setBasePen(Qt::NoPen);
        label->setLabel(
            tr("%12 %1 at op %2, %3 (%4)\nactivations %5 = stored %6 + recomputed %7 + workspace %8\n"
               "highest activations %9 (textbook count %10), step %11 ms")
                .arg(byteAmount(stackTop(s, peak, m_spec.get(views::memorytimeline::kMemoryScope))))
                .arg(int(px))
                .arg(QString::fromStdString(op.name), QString::fromLatin1(phaseName(op.phase)),
                    byteAmount(double(s.activationBytesAt(peak))),
                    byteAmount(double(atPeak[size_t(MemoryCategory::StoredActivations)])),
                    byteAmount(double(atPeak[size_t(MemoryCategory::RecomputedActivations)])),
                    byteAmount(double(atPeak[size_t(MemoryCategory::Workspace)])),
                    byteAmount(double(s.peakActivationBytes)), byteAmount(double(s.predictedActivationBytes)))
                .arg(formatNumber(s.stepMs, 3))
                .arg(activationsOnly ? tr("activation peak") : tr("peak")));
        label->setLabelColor(colors.text);
        label->setLabelFont(sizedFont(font(), 9));
        label->setLabelPadding(2);
    }
    auto *line = new QCPItemStraightLine(m_plot);
    line->setClipAxisRect(rect);
    line->point1->setAxisRect(rect);
    line->point2->setAxisRect(rect);
    line->point1->setAxes(x, y);
    line->point2->setAxes(x, y);
    line->setPen(QPen(colors.text, 1.5, Qt::DashLine));
    m_cursorLines.push_back(line);
    m_cursorAxes.push_back(x); // what is live at the cursor: in the axis's label, under the data
    m_cursorTexts.push_back({});
}

void MemoryTimelineView::drawCursor()
{
    if (!m_drawn)
        return;
    const MemoryTimeline &t = m_drawn->timeline;
    const int op = m_spec.cursor;
    for (size_t i = 0; i < t.strategies.size() && i < m_cursorLines.size(); ++i) {
        const TimelineStrategy &s = t.strategies[i];
        const bool show = op >= 0 && s.problem.empty() && op < int(s.ops.size());
        m_cursorLines[i]->setVisible(show);
        m_cursorTexts[i].clear();
        if (show) {
            m_cursorLines[i]->point1->setCoords(op, 0);
            m_cursorLines[i]->point2->setCoords(op, 1);
            const int point = s.pointAtOp(op);
            const MemoryOp &o = s.ops[size_t(op)];
            m_cursorTexts[i]
                = tr("op %1: %2 (%3), live %4, activations %5")
                      .arg(op)
                      .arg(QString::fromStdString(o.name), QString::fromLatin1(phaseName(o.phase)),
                          byteAmount(double(s.liveBytesAt(point))), byteAmount(double(s.activationBytesAt(point))));
        }
        m_cursorAxes[i]->setLabel(m_cursorTexts[i].isEmpty()
                ? tr("op of the step")
                : tr("op of the step · at the cursor, %1").arg(m_cursorTexts[i]));
    }
}

void MemoryTimelineView::setCursor(int op)
{
    if (!m_drawn)
        return;
    op = std::clamp(op, 0, std::max(0, m_drawn->timeline.maxOps - 1));
    if (op == m_spec.cursor)
        return;
    m_spec.cursor = op;
    drawCursor();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    emit specEdited(m_spec);
}

void MemoryTimelineView::moveCursorTo(QMouseEvent *event)
{
    QCPAxisRect *rect = m_plot->axisRectAt(event->position());
    if (!rect)
        return;
    setCursor(int(std::lround(rect->axis(QCPAxis::atBottom)->pixelToCoord(event->position().x()))));
}

void MemoryTimelineView::keyPressEvent(QKeyEvent *event)
{
    if (!m_drawn)
        return View::keyPressEvent(event);
    if (event->key() == Qt::Key_Right || event->key() == Qt::Key_Space)
        return setCursor(m_spec.cursor + 1);
    if (event->key() == Qt::Key_Left)
        return setCursor(m_spec.cursor - 1);
    View::keyPressEvent(event);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::memorytimeline::makeView(QWidget *parent)
{
    return std::make_unique<MemoryTimelineView>(parent);
}
