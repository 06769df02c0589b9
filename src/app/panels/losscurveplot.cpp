#include "panels/losscurveplot.h"

#include "views/palette.h"
#include "views/viewfonts.h"

#include "views/plottheme.h"

#include <QResizeEvent>

#include <cmath>

namespace atlas {

namespace {

// Ticks for a log loss axis: the finest of 1 / 1-3 / 1-2-5 / … per decade that leaves each label room (a
// range narrower than those steps gets every other tick of a finer set).
QSharedPointer<QCPAxisTickerText> lossTicker(double low, double high, int pixels)
{
    static const std::vector<std::vector<double>> kMantissas = {{1}, {1, 3}, {1, 2, 5}, {1, 1.5, 2, 3, 4, 5, 6, 8},
        {1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9}};
    const size_t room = size_t(std::max(2, pixels / 22));
    std::vector<double> ticks;
    for (const std::vector<double> &mantissas : kMantissas) {
        std::vector<double> finer;
        for (int exponent = -5; exponent <= 3; ++exponent)
            for (double m : mantissas)
                if (const double v = m * std::pow(10.0, exponent); v >= low && v <= high)
                    finer.push_back(v);
        if (finer.size() <= room) {
            ticks = std::move(finer);
            continue;
        }
        if (ticks.size() < 2) {
            const size_t stride = (finer.size() + room - 1) / room;
            ticks.clear();
            for (size_t i = 0; i < finer.size(); i += stride)
                ticks.push_back(finer[i]);
        }
        break;
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (double v : ticks)
        ticker->addTick(v, QString::number(v, 'g', 3));
    return ticker;
}

} // namespace

LossCurvePlot::LossCurvePlot(QWidget *parent)
    : QCustomPlot(parent)
{
    setMinimumHeight(110);
    setMinimumWidth(160); // the legend wraps (resizeEvent) in a dock narrower than its entries
    setToolTip(tr("Cross-entropy loss on a log scale: every training step (thin) and held-out examples (thick)"));
    QCPGraph *train = addGraph();
    train->setName(tr("training step"));
    QCPGraph *heldOut = addGraph();
    heldOut->setName(tr("held-out"));
    heldOut->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
    xAxis->setLabel(tr("step"));
    yAxis->setLabel(tr("loss (nats)"));
    yAxis->setScaleType(QCPAxis::stLogarithmic);
    xAxis->setRange(0, 100);
    yAxis->setRange(0.1, 10);
    yAxis->setTicker(lossTicker(0.1, 10, 100));
    // The legend goes in a row above the axes: inside them it would hide part of the curve.
    legend->setVisible(true);
    axisRect()->insetLayout()->take(legend);
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, legend);
    plotLayout()->setRowStretchFactor(0, 0.001);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setMargins(QMargins(4, 2, 4, 2));
}

void LossCurvePlot::reset(int firstStep, int totalSteps)
{
    for (int i = 0; i < graphCount(); ++i)
        graph(i)->data()->clear();
    m_totalSteps = totalSteps;
    xAxis->setRange(firstStep, std::min(totalSteps, firstStep + 100));
    m_lossMin = m_lossMax = 0;
    replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePlot::addSteps(const QVector<double> &steps, const QVector<double> &losses)
{
    graph(0)->addData(steps, losses, true);
    for (double loss : losses)
        include(loss);
}

void LossCurvePlot::addHeldOut(int step, double loss)
{
    graph(1)->addData(step, loss);
    include(loss);
}

void LossCurvePlot::include(double loss)
{
    loss = std::max(loss, 1e-4);
    m_lossMin = m_lossMax > 0 ? std::min(m_lossMin, loss) : loss;
    m_lossMax = std::max(m_lossMax, loss);
}

void LossCurvePlot::rescale(int lastStep)
{
    const QCPRange steps = xAxis->range();
    if (lastStep > steps.upper)
        xAxis->setRange(
            steps.lower, std::min<double>(m_totalSteps, std::ceil(steps.lower + (lastStep - steps.lower) * 1.25)));
    rescaleLossAxis();
    replot(QCustomPlot::rpQueuedReplot);
}

void LossCurvePlot::rescaleLossAxis()
{
    if (m_lossMax <= 0)
        return;
    const QCPRange range(m_lossMin / 1.25, m_lossMax * 1.25);
    const int pixels = axisRect()->height();
    if (range == yAxis->range() && pixels == m_tickedPixels)
        return;
    m_tickedPixels = pixels;
    yAxis->setRange(range);
    yAxis->setTicker(lossTicker(range.lower, range.upper, pixels));
}

void LossCurvePlot::resizeEvent(QResizeEvent *event)
{
    // The legend's entries side by side when they fit, else one a row (a narrow dock).
    legend->setWrap(0);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    if (legend->minimumOuterSizeHint().width() > event->size().width()) {
        legend->setWrap(1);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }
    QCustomPlot::resizeEvent(event);
    // The axis rect takes its new size at the next layout: retick after it.
    QMetaObject::invokeMethod(
        this,
        [this] {
            replot();
            rescaleLossAxis();
            replot(QCustomPlot::rpQueuedReplot);
        },
        Qt::QueuedConnection);
}

void LossCurvePlot::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::FontChange && graphCount() >= 2)
        applyTheme(m_theme);
}

void LossCurvePlot::applyTheme(const std::string &theme)
{
    m_theme = theme;
    const bool dark = theme == "dark";
    applyPlotTheme(this, theme);
    QColor training = palette::coolCurve(dark); // each step's loss, thin and faint under the held-out points
    training.setAlpha(dark ? 150 : 120);
    graph(0)->setPen(QPen(training, 1));
    const QColor heldOut = palette::warmCurve(dark);
    graph(1)->setPen(QPen(heldOut, 2.5));
    graph(1)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, heldOut, heldOut, 6));
    legend->setBrush(Qt::NoBrush);
    legend->setBorderPen(Qt::NoPen);
    legend->setTextColor(themeColors(dark ? "dark" : "light").text);
    legend->setFont(sizedFont(font(), 9));
    replot(QCustomPlot::rpQueuedReplot);
}

} // namespace atlas
