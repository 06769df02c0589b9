#include "scaling/scalingview.h"

#include "scaling/scaling.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/plottitle.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

namespace atlas {

namespace {

QColor rawColor(bool dark)
{
    return palette::rawScores(dark);
}
QColor scaledColor(bool dark)
{
    return themeColors(dark ? "dark" : "light").accent;
}

QCPTextElement *addTitleAndLegend(QCustomPlot *plot, const QString &title)
{
    plot->plotLayout()->insertRow(0);
    auto *element = new PlotTitle(plot, title, sizedFont(plot->font(), 11, true));
    plot->plotLayout()->addElement(0, 0, element);
    legendUnderAxes(plot, 2);
    return element;
}

} // namespace

ScalingView::ScalingView(QWidget *parent)
    : View(parent)
{
    m_message = new QLabel(this);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setMargin(20);
    m_plots = new QWidget(this);
    m_variance = new QCustomPlot(m_plots);
    m_softmax = new QCustomPlot(m_plots);
    for (QCustomPlot *plot : {m_variance, m_softmax})
        plot->setMinimumSize(240, 220);
    auto *row = new QHBoxLayout(m_plots);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_variance, 1);
    row->addWidget(m_softmax, 1);
    m_caption = new QLabel(this);
    m_caption->setWordWrap(true);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_plots, 1);
    layout->addWidget(m_caption);

    m_varianceTitle = addTitleAndLegend(m_variance, tr("Var(q·k) grows with d; Var(q·k/√d) stays 1"));
    for (QCPAxis *axis : {m_variance->xAxis, m_variance->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
        ticker->setLogBase(axis == m_variance->xAxis ? 2 : 10);
        axis->setTicker(ticker);
        axis->setNumberFormat("gb");
    }
    m_variance->xAxis->setLabel(tr("d (components of q and k)"));
    m_variance->yAxis->setLabel(tr("variance"));
    auto addGraph = [this](const QString &name) {
        QCPGraph *g = m_variance->addGraph();
        g->setName(name);
        return g;
    };
    m_variance->legend->setWrap(2);
    m_variance->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_rawTheory = addGraph(tr("d"));
    m_raw = addGraph(tr("random: Var(q·k)"));
    m_scaledTheory = addGraph(tr("1"));
    m_scaled = addGraph(tr("random: Var(q·k/√d)"));
    m_headRaw = addGraph(tr("this head: Var(q·k)"));
    m_headScaled = addGraph(tr("this head: Var(q·k/√d)"));
    m_rawTheory->removeFromLegend();
    m_scaledTheory->removeFromLegend();
    m_variance->legend->setFillOrder(QCPLegend::foColumnsFirst, true);

    m_softmaxTitle = addTitleAndLegend(m_softmax, QString());
    m_withDivision = new QCPBars(m_softmax->xAxis, m_softmax->yAxis);
    m_withDivision->setName(tr("softmax(q·k/√d): the model"));
    m_withoutDivision = new QCPBars(m_softmax->xAxis, m_softmax->yAxis);
    m_withoutDivision->setName(tr("softmax(q·k): without 1/√d"));
    auto *group = new QCPBarsGroup(m_softmax);
    m_withDivision->setBarsGroup(group);
    m_withoutDivision->setBarsGroup(group);
    m_softmax->yAxis->setLabel(tr("weight"));
    m_softmax->xAxis->setLabel(tr("key"));
    m_softmax->yAxis->setRange(0, 1.05);
    connect(m_softmax, &QCustomPlot::afterLayout, this, &ScalingView::updateSoftmaxTicks);
    m_softmax->legend->setWrap(1);
    m_softmax->legend->setFillOrder(QCPLegend::foColumnsFirst, true);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString ScalingView::caption() const
{
    return m_caption->isVisible() ? m_caption->text() : QString();
}

QString ScalingView::message() const
{
    return m_message->isVisible() ? m_message->text() : QString();
}

void ScalingView::showMessage(const QString &text)
{
    m_message->setFont(sizedFont(font(), 12));
    m_message->setText(text);
    m_message->show();
    m_plots->hide();
    m_caption->hide();
}

void ScalingView::refresh()
{
    applyTheme();
    const auto *analysis = currentAnalysis<ScalingAnalysis>();
    if (analysis == nullptr)
        return showMessage(!m_input.analysis.problem.isEmpty() ? m_input.analysis.problem
                : m_input.analysis.pending                     ? tr("Measuring…")
                                                               : QString::fromUtf8(kNothingComputed));
    m_message->hide();
    m_plots->show();
    m_caption->show();
    drawVariance(*analysis);
    drawSoftmax(*analysis);
    const attention::HeadScaling &h = analysis->measured;
    // Most models divide by √d; GPT-Neo and T5 do not, so their own weights are the undivided ones.
    const ModelConfig *config = m_input.model ? &m_input.model->config : nullptr;
    const bool divides = !config || config->scaleScores;
    m_withDivision->setName(divides ? tr("softmax(q·k/√d): the model") : tr("softmax(q·k/√d): with 1/√d"));
    m_withoutDivision->setName(
        divides ? tr("softmax(q·k): without 1/√d") : tr("softmax(q·k): the model's rule (no 1/√d)"));
    QString own;
    if (!divides)
        own = tr(" This model (%1) does not divide its scores by √d: its rule is the red bars%2.")
                  .arg(QString::fromStdString(config->modelType))
                  .arg(config->windowed(analysis->layer) ? tr(", over every earlier key (this layer's sliding window "
                                                              "of %1 positions is not applied here)")
                                                               .arg(config->slidingWindow)
                                                         : QString());
    m_caption->setFont(sizedFont(font(), 10));
    m_caption->setText(tr("Layer %1 · head %2: d = %3. Its q and k components have variance %4 on average (the random "
                          "model's: 1). Over the %5 (query, key) pairs the mask allows, Var(q·k) = %6 and "
                          "Var(q·k/√d) = %7. The largest weight of a row averages %8 with the division and %9 "
                          "without it: without 1/√d softmax saturates, and its gradient vanishes.")
                           .arg(analysis->layer)
                           .arg(analysis->head)
                           .arg(h.dim)
                           .arg(formatNumber(h.componentVariance, 3))
                           .arg(h.pairs)
                           .arg(formatNumber(h.variance, 3))
                           .arg(formatNumber(h.scaledVariance, 3))
                           .arg(formatNumber(h.meanMaxScaled, 2))
                           .arg(formatNumber(h.meanMaxUnscaled, 2))
        + own);
}

void ScalingView::drawVariance(const ScalingAnalysis &a)
{
    QVector<double> d, raw, scaled;
    for (const attention::DotProductVariance &p : a.random) {
        d << p.dim;
        raw << p.variance;
        scaled << p.scaledVariance;
    }
    m_raw->setData(d, raw, true);
    m_scaled->setData(d, scaled, true);
    m_rawTheory->setData(d, d, true);
    m_scaledTheory->setData(d, QVector<double>(d.size(), 1.0), true);
    const attention::HeadScaling &h = a.measured;
    m_headRaw->setData({double(h.dim)}, {std::max(h.variance, 1e-6)});
    m_headScaled->setData({double(h.dim)}, {std::max(h.scaledVariance, 1e-6)});
    const double top = std::max({d.isEmpty() ? 1.0 : d.back(), h.variance, h.scaledVariance, 1.0});
    const double bottom = std::min({0.3, h.variance, h.scaledVariance});
    m_variance->xAxis->setRange(0.7, (d.isEmpty() ? 1.0 : d.back()) * 1.4);
    m_variance->yAxis->setRange(std::max(bottom * 0.5, 1e-4), top * 2);
    m_variance->replot();
}

void ScalingView::drawSoftmax(const ScalingAnalysis &a)
{
    const attention::HeadScaling &h = a.measured;
    const int T = int(h.scaled.size());
    QVector<double> keys, with, without;
    for (int j = 0; j < T; ++j) {
        keys << j;
        with << h.scaled[size_t(j)];
        without << h.unscaled[size_t(j)];
    }
    m_withDivision->setData(keys, with, true);
    m_withoutDivision->setData(keys, without, true);
    m_tickedTokens = -1; // the labels follow the axis' width once it is laid out
    updateSoftmaxTicks();
    m_softmax->xAxis->setRange(-0.7, T - 0.3);
    m_softmaxTitle->setText(
        tr("Query %1 '%2': its weights over the keys").arg(h.query).arg(tokenLabels(m_input, T).value(h.query)));
    m_softmax->replot();
}

// Every token's label when they fit at the current font, else every n-th.
void ScalingView::updateSoftmaxTicks()
{
    const auto *analysis = currentAnalysis<ScalingAnalysis>();
    if (analysis == nullptr)
        return;
    const int T = int(analysis->measured.scaled.size());
    const int pixels = m_softmax->axisRect()->width();
    const QStringList labels = tokenLabels(m_input, T);
    const QFontMetrics metrics(sizedFont(font(), 9));
    // Only the labels shown must not overlap: measure those, and thin them out further while the widest of them
    // needs more room (every only grows, so this ends). At thousands of tokens it measures dozens, not thousands.
    int widest = metrics.height(), every = 0;
    for (;;) {
        const int room = std::max(1, pixels / (widest + metrics.height()));
        const int needed = std::max(1, (T + room - 1) / room);
        if (needed <= every)
            break;
        every = needed;
        for (int j = 0; j < T; j += every)
            widest = std::max(widest, metrics.horizontalAdvance(labels.value(j)));
    }
    if (every == m_tickedEvery && T == m_tickedTokens)
        return;
    m_tickedEvery = every;
    m_tickedTokens = T;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int j = 0; j < T; j += every)
        ticker->addTick(j, labels.value(j));
    m_softmax->xAxis->setTicker(ticker);
    // Called after the layout of a replot: the axes took their ticks before it, so take them again for this one
    // (an export draws once, with no later replot).
    m_softmax->axisRect()->update(QCPLayoutElement::upPreparation);
}

void ScalingView::applyTheme()
{
    const bool dark = m_spec.theme == "dark";
    const ThemeColors colors = themeColors(m_spec.theme);
    for (QCustomPlot *plot : {m_variance, m_softmax}) {
        applyPlotTheme(plot, m_spec.theme);
        plot->legend->setFont(sizedFont(font(), 9));
        plot->legend->setBrush(colors.background);
        plot->legend->setTextColor(colors.text);
        plot->legend->setBorderPen(QPen(colors.frame));
        for (QCPAxis *axis : {plot->xAxis, plot->yAxis}) {
            axis->setLabelFont(sizedFont(font(), 10));
            axis->setTickLabelFont(sizedFont(font(), 9));
        }
    }
    for (QCPTextElement *title : {m_varianceTitle, m_softmaxTitle}) {
        title->setFont(sizedFont(font(), 11, true));
        title->setTextColor(colors.text);
    }
    auto points = [](QCPGraph *g, QColor color, QCPScatterStyle::ScatterShape shape, double size) {
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(shape, color, color, size));
    };
    points(m_raw, rawColor(dark), QCPScatterStyle::ssCircle, 7);
    points(m_scaled, scaledColor(dark), QCPScatterStyle::ssSquare, 7);
    points(m_headRaw, rawColor(dark), QCPScatterStyle::ssStar, 16);
    points(m_headScaled, scaledColor(dark), QCPScatterStyle::ssStar, 16);
    for (auto [g, c] : {std::pair {m_rawTheory, rawColor(dark)}, std::pair {m_scaledTheory, scaledColor(dark)}}) {
        g->setPen(QPen(c, 1.5, Qt::DashLine));
        g->setScatterStyle(QCPScatterStyle::ssNone);
    }
    m_withDivision->setPen(Qt::NoPen);
    m_withDivision->setBrush(scaledColor(dark));
    m_withoutDivision->setPen(Qt::NoPen);
    QColor faded = rawColor(dark);
    faded.setAlphaF(0.75);
    m_withoutDivision->setBrush(faded);
    QPalette pal = m_message->palette();
    pal.setColor(QPalette::WindowText, colors.text);
    m_message->setPalette(pal);
    m_caption->setPalette(pal);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::scaling::makeView(QWidget *parent)
{
    return std::make_unique<ScalingView>(parent);
}
