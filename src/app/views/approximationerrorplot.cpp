#include "views/approximationerrorplot.h"

#include "views/palette.h"
#include "views/plottitle.h"
#include "views/viewfonts.h"

#include "views/plottheme.h"

#include "views/colormaps.h"

#include "attention/attentionkernel.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace atlas {

namespace {

QColor weightColor(bool dark)
{
    return palette::coolCurve(dark);
}

QColor contextColor(bool dark)
{
    return palette::warmCurve(dark);
}

// One series: the mean, and the min–max band as a fill between two invisible graphs.
QCPGraph *addBand(QCustomPlot *plot, QCPAxis *y, QCPGraph **low, QCPGraph **high)
{
    *low = plot->addGraph(plot->xAxis, y);
    *high = plot->addGraph(plot->xAxis, y);
    (*high)->setChannelFillGraph(*low);
    (*low)->removeFromLegend();
    QCPGraph *mean = plot->addGraph(plot->xAxis, y);
    mean->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
    return mean;
}

} // namespace

ApproximationErrorPlot::ApproximationErrorPlot(QWidget *parent)
    : QCustomPlot(parent)
{
    m_weightMean = addBand(this, yAxis, &m_weightLow, &m_weightHigh);
    m_contextMean = addBand(this, yAxis2, &m_contextLow, &m_contextHigh);
    m_contextHigh->removeFromLegend(); // one band entry in the legend stands for both
    yAxis2->setVisible(true);
    for (QCPAxis *axis : {xAxis, yAxis, yAxis2}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
        axis->setNumberFormat("gb");
    }
    yAxis->setLabel(tr("weights: mean row Σⱼ|wᵢⱼ − pᵢⱼ|"));
    yAxis2->setLabel(tr("context: mean |ΔC|"));
    legend->setVisible(true);
    plotLayout()->insertRow(0);
    plotLayout()->addElement(
        0, 0, new PlotTitle(this, tr("Error against exact softmax attention"), sizedFont(font(), 11, true)));
    // The legend gets a row of its own under the title: inside the axes it would cover the curves on a small plot.
    axisRect()->insetLayout()->take(legend);
    plotLayout()->insertRow(1);
    plotLayout()->addElement(1, 0, legend);
    plotLayout()->setRowStretchFactor(1, 0.001);
    m_marker = new QCPItemStraightLine(this);
    m_markerLabel = new QCPItemText(this);
    m_markerLabel->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_markerLabel->setPadding(QMargins(4, 2, 4, 2));
    m_markerLabel->setClipToAxisRect(false);
    setSelected(-1);
    setTheme("light");
}

void ApproximationErrorPlot::setTheme(const std::string &theme)
{
    const bool dark = theme == "dark";
    const ThemeColors colors = themeColors(theme);
    applyPlotTheme(this, theme);
    qobject_cast<QCPTextElement *>(plotLayout()->element(0, 0))->setFont(sizedFont(font(), 11, true));
    legend->setFont(sizedFont(font(), 10));
    legend->setBrush(colors.background);
    legend->setTextColor(colors.text);
    legend->setBorderPen(QPen(colors.frame));
    for (auto [mean, low, high, color, axis] :
        {std::tuple {m_weightMean, m_weightLow, m_weightHigh, weightColor(dark), yAxis},
            std::tuple {m_contextMean, m_contextLow, m_contextHigh, contextColor(dark), yAxis2}}) {
        mean->setPen(QPen(color, 2));
        QColor band = color;
        band.setAlphaF(0.22);
        low->setPen(Qt::NoPen);
        high->setPen(Qt::NoPen);
        high->setBrush(band);
        axis->setLabelColor(color); // the axis says which series it measures
        axis->setTickLabelColor(color);
    }
    m_marker->setPen(QPen(colors.text, 1, Qt::DashLine));
    m_markerLabel->setColor(colors.text);
    replot(rpQueuedReplot);
}

void ApproximationErrorPlot::setSweep(std::shared_ptr<const attention::ApproximationSweep> sweep)
{
    m_sweep = std::move(sweep);
    fill();
    setSelected(-1);
}

void ApproximationErrorPlot::fill()
{
    for (QCPGraph *g : {m_weightLow, m_weightHigh, m_weightMean, m_contextLow, m_contextHigh, m_contextMean})
        g->data()->clear();
    if (!m_sweep || m_sweep->points.empty())
        return;
    const attention::ApproximationSweep &s = *m_sweep;
    double lo[2] = {1e300, 1e300}, hi[2] = {0, 0};
    const auto add
        = [&](int axis, QCPGraph *low, QCPGraph *high, QCPGraph *mean, double x, const attention::SweepStat &st) {
              if (!(st.min > 0))
                  return;
              low->addData(x, st.min);
              high->addData(x, st.max);
              mean->addData(x, st.mean);
              lo[axis] = std::min(lo[axis], st.min);
              hi[axis] = std::max(hi[axis], st.max);
          };
    for (const attention::ApproximationPoint &p : s.points) {
        if (s.hasWeightErrors)
            add(0, m_weightLow, m_weightHigh, m_weightMean, p.value, p.rowL1);
        add(1, m_contextLow, m_contextHigh, m_contextMean, p.value, p.meanAbsError);
    }
    xAxis->setRange(s.points.front().value / 1.5, s.points.back().value * 1.5);
    const attention::AttentionKernelKind &kernel = attention::attentionKernel(s.kernel);
    xAxis->setLabel(tr("%1 %2 (log scale)")
                        .arg(QString::fromStdString(kernel.approximation.counts),
                            QString::fromStdString(kernel.approximation.symbol)));
    yAxis->setVisible(s.hasWeightErrors); // no weight errors above kMaxDenseSweepTokens: no empty axis either
    QCPAxis *axes[2] = {yAxis, yAxis2};
    for (int a = 0; a < 2; ++a)
        axes[a]->setRange(hi[a] > 0 ? QCPRange(lo[a] / 1.6, hi[a] * 1.6) : QCPRange(0.01, 1));
    m_weightMean->setName(s.hasWeightErrors
            ? tr("weights, mean (left axis)")
            : tr("weights: not computed (T > %1)").arg(attention::kMaxDenseSweepTokens));
    m_weightHigh->setName(tr("min–max over %1 seeds").arg(s.seeds));
    m_contextMean->setName(tr("context, mean (right axis)"));
    updateValueTicks();
}

void ApproximationErrorPlot::setSelected(int index)
{
    const bool shown = m_sweep && index >= 0 && index < int(m_sweep->points.size());
    const double x = shown ? m_sweep->points[size_t(index)].value : 1.0;
    m_marker->setVisible(shown);
    m_markerLabel->setVisible(shown);
    m_marker->point1->setCoords(x, 1);
    m_marker->point2->setCoords(x, 10);
    m_markerLabel->position->setCoords(x, 0.0);
    if (shown)
        m_markerLabel->setText(
            QStringLiteral("%1 = %2")
                .arg(QString::fromStdString(attention::attentionKernel(m_sweep->kernel).approximation.symbol))
                .arg(int(x)));
    // In the right half the label goes left of the line, clear of the right axis.
    const bool right = shown && 2 * index >= int(m_sweep->points.size());
    m_markerLabel->setPositionAlignment((right ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop);
    replot(rpQueuedReplot);
}

void ApproximationErrorPlot::resizeEvent(QResizeEvent *event)
{
    QCustomPlot::resizeEvent(event);
    updateValueTicks();
}

void ApproximationErrorPlot::updateValueTicks()
{
    if (!m_sweep || m_sweep->points.empty())
        return;
    // Every size is a tick, labelled when its label does not crowd the next labelled one (k = T can sit just
    // above a power of two, and 256 512 1024 need room on a narrow plot).
    const QFontMetrics fm(xAxis->tickLabelFont());
    const double pixels = std::max(80, width() - 140), span = std::log(xAxis->range().upper / xAxis->range().lower);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    double labelled = 0;
    for (auto it = m_sweep->points.rbegin(); it != m_sweep->points.rend(); ++it) {
        const QString text = QString::number(it->value);
        const bool room = labelled == 0
            || std::log(labelled / it->value) / span * pixels
                >= fm.horizontalAdvance(text + QString::number(labelled)) / 2.0 + 8;
        ticker->addTick(it->value, room ? text : QString());
        labelled = room ? it->value : labelled;
    }
    xAxis->setTicker(ticker);
    replot(rpQueuedReplot);
}

} // namespace atlas
