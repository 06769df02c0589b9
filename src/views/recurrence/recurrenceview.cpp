#include "recurrence/recurrenceview.h"

#include "views/heatmapticks.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

QCPGraph *addLine(QCPAxisRect *rect, const QColor &colour, Qt::PenStyle style, const QString &name)
{
    auto *graph = new QCPGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    graph->setPen(QPen(colour, 2.5, style));
    graph->setName(name);
    return graph;
}

} // namespace

RecurrenceView::RecurrenceView(QWidget *parent)
    : ResultPlotView(parent)
    , m_radius(new QDoubleSpinBox(controlRow()))
    , m_query(new QSpinBox(controlRow()))
{
    connect(plot(), &QCustomPlot::mouseMove, this, &RecurrenceView::showValueAt);
    plot()->setMouseTracking(true);
    plot()->setToolTip(tr("An RNN run on the vectors this block's attention reads, beside one of its heads. Hover a "
                          "token for its numbers."));
    auto *row = static_cast<QHBoxLayout *>(controlRow()->layout());
    row->addWidget(new QLabel(tr("RNN's \u03C1 = \u2016W\u2016\u2082:"), controlRow()));
    m_radius->setRange(0.05, kMaxRnnRadius);
    m_radius->setSingleStep(0.05);
    m_radius->setDecimals(2);
    m_radius->setToolTip(tr("The spectral norm of the RNN's recurrent matrix W (\u03C1 times a random orthogonal "
                            "matrix). Below 1, a token's reach falls at least as fast as \u03C1 to the power of its "
                            "distance; above 1, tanh's saturation decides (spec key rnn_radius)"));
    row->addWidget(m_radius);
    row->addWidget(new QLabel(tr("Row i:"), controlRow()));
    m_query->setRange(-1, 0);
    m_query->setSpecialValueText(tr("the last token"));
    m_query->setToolTip(tr("The position whose RNN state and attention row are followed back to every token (spec "
                           "key query)"));
    row->addWidget(m_query);
    row->addStretch(1);
    connect(m_radius, &QDoubleSpinBox::valueChanged, this, [this](double radius) {
        m_spec.set(views::recurrence::kRnnRadius, radius);
        emit specEdited(m_spec);
    });
    connect(m_query, &QSpinBox::valueChanged, this, [this](int query) {
        m_spec.query = query;
        emit specEdited(m_spec);
    });
}

void RecurrenceView::syncControls()
{
    const QSignalBlocker blockRadius(m_radius), blockQuery(m_query);
    m_radius->setValue(m_spec.get(views::recurrence::kRnnRadius));
    m_query->setMaximum(std::max(0, int(m_input.tokens.size()) - 1));
    m_query->setValue(m_spec.query);
}

QString RecurrenceView::pendingText() const
{
    return tr("Running the RNN over the tokens and following its last state back\u2026");
}

QString RecurrenceView::draw(const RecurrenceAnalysis &result)
{
    syncControls();
    const RecurrenceComparison &c = result.comparison;
    const RnnReach &r = c.rnn;
    m_shown = c;
    m_panels.clear();
    const int T = r.tokens, i = r.query;
    setTitle(tr("An RNN against attention \u00B7 %1 \u00B7 layer %2, row %3")
                 .arg(m_input.model ? QString::fromStdString(m_input.model->name) : QString())
                 .arg(c.layer)
                 .arg(i));
    const QColor rnnColour = seriesColours().at(1), attentionColour = seriesColours().at(0);

    // Left: the two counts of Vaswani et al.'s Table 1 on this input, side by side.
    QCPAxisRect *steps = addAxisRect(0, 0);
    QCPAxis *category = steps->axis(QCPAxis::atBottom), *count = steps->axis(QCPAxis::atLeft);
    auto *group = new QCPBarsGroup(plot());
    auto *rnnBars = new QCPBars(category, count), *transformerBars = new QCPBars(category, count);
    const std::pair<QCPBars *, QColor> styles[] = {{rnnBars, rnnColour}, {transformerBars, attentionColour}};
    for (const auto &[bars, colour] : styles) {
        bars->setWidth(0.35);
        bars->setPen(Qt::NoPen);
        bars->setBrush(colour);
        bars->setBarsGroup(group);
    }
    rnnBars->setName(tr("RNN"));
    transformerBars->setName(tr("transformer (%1 blocks)").arg(c.blocks));
    // Key 0: from token 0 to row i, the RNN's i recurrent steps against one attention step; key 1: the steps one after
    // another before the last state exists, the RNN's T against the transformer's L blocks.
    rnnBars->addData(0, i);
    transformerBars->addData(0, 1);
    rnnBars->addData(1, T);
    transformerBars->addData(1, c.blocks);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    ticks->addTick(0, tr("token 0\n\u2192 row %1").arg(i));
    ticks->addTick(1, tr("one after\nanother"));
    category->setTicker(ticks);
    category->setRange(-0.6, 1.6);
    category->grid()->setVisible(false);
    const double tallest = std::max(T, c.blocks);
    count->setRange(0, tallest * 1.3);
    count->setLabel(tr("steps"));
    for (const auto &[bars, colour] : styles)
        for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it) {
            auto *label = new QCPItemText(plot());
            label->setClipAxisRect(steps);
            label->position->setAxes(category, count);
            label->position->setCoords(it->key + (bars == rnnBars ? -0.19 : 0.19), it->value + tallest * 0.02);
            label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
            label->setText(QString::number(int(it->value)));
            label->setColor(themeColors(m_spec.theme).text);
        }
    setPanelTitle(steps, tr("Steps"));

    // Middle: how far the RNN reaches, measured and bounded.
    QCPAxisRect *reach = addAxisRect(0, 1);
    QCPGraph *measured = addLine(reach, rnnColour, Qt::SolidLine, tr("RNN's reach, measured"));
    QCPGraph *bound = addLine(reach, rnnColour, Qt::DashLine, tr("its bound \u03C1^(i\u2212j)\u2016U\u2016_F"));
    double low = INFINITY, high = -INFINITY;
    for (int j = 0; j <= i; ++j) {
        if (std::isfinite(r.log10Reach[j])) {
            measured->addData(j, r.log10Reach[j]);
            low = std::min(low, r.log10Reach[j]);
            high = std::max(high, r.log10Reach[j]);
        }
        bound->addData(j, r.log10Bound[j]);
        low = std::min(low, r.log10Bound[j]);
        high = std::max(high, r.log10Bound[j]);
    }
    const double pad = std::max(0.5, (high - low) * 0.05);
    reach->axis(QCPAxis::atLeft)->setRange(low - pad, high + pad);
    reach->axis(QCPAxis::atLeft)->setLabel(tr("log\u2081\u2080 reach"));
    setPanelTitle(reach, tr("RNN's reach on h_%1").arg(i));

    // Right: the head's weights from row i.
    QCPAxisRect *weights = addAxisRect(0, 2);
    auto *bars = new QCPBars(weights->axis(QCPAxis::atBottom), weights->axis(QCPAxis::atLeft));
    bars->setWidth(0.8);
    bars->setPen(Qt::NoPen);
    bars->setBrush(attentionColour);
    float top = 0;
    for (int j = 0; j < int(c.attention.size()); ++j) {
        bars->addData(j, c.attention[j]);
        top = std::max(top, c.attention[j]);
    }
    weights->axis(QCPAxis::atLeft)->setRange(0, std::max(0.05, top * 1.08));
    weights->axis(QCPAxis::atLeft)->setLabel(tr("weight"));
    setPanelTitle(weights, tr("Head %1 from row %2").arg(c.head).arg(i));

    addLegend(4); // one row under the panels: per-panel legends would set the columns' widths
    if (auto *grid = qobject_cast<QCPLayoutGrid *>(steps->layout()))
        grid->setColumnStretchFactor(0, 0.7); // two categories need less room than the tokens
    m_panels = {reach, weights};
    for (QCPAxisRect *rect : {reach, weights}) {
        rect->axis(QCPAxis::atBottom)->setRange(-0.6, T - 0.4);
        rect->axis(QCPAxis::atBottom)->grid()->setVisible(false);
    }
    labelTokenAxes();

    // The caption's numbers: the first token's reach against row i's own, and where the head looks.
    const double fall = std::isfinite(r.log10Reach[0]) ? r.log10Reach[i] - r.log10Reach[0] : INFINITY;
    QString fallText = tr("exactly 0 (every unit saturated on the way)");
    if (std::isfinite(fall))
        fallText = fall >= 0 ? tr("10^%1 times smaller").arg(formatNumber(fall, 3))
                             : tr("10^%1 times larger").arg(formatNumber(-fall, 3));
    const int k = c.strongestKey;
    QString strongest = tr("Head %1 puts its largest weight from row %2, %3, on token %4 '%5', %6 away, in one step")
                            .arg(c.head)
                            .arg(i)
                            .arg(formatPercent(c.attention.empty() ? 0.0 : c.attention[k]))
                            .arg(k)
                            .arg(tokenLabel(m_input, k))
                            .arg(std::abs(i - k));
    if (k == i)
        strongest = tr("Head %1 puts its largest weight from row %2, %3, on that token itself")
                        .arg(c.head)
                        .arg(i)
                        .arg(formatPercent(c.attention[k]));
    else if (k < i && std::isfinite(r.log10Reach[k]))
        strongest += tr("; the RNN's reach from there is 10^%1 of x_%2's own")
                         .arg(formatNumber(r.log10Reach[k] - r.log10Reach[i], 3))
                         .arg(i);
    else if (k > i)
        strongest += tr("; the RNN has not read it yet at row %1").arg(i);
    return tr("Vaswani et al. (2017, \u00A74) chose attention for the two counts on the left. The RNN h_t = "
              "tanh(W h_{t\u22121} + U x_t) (untrained; W = \u03C1\u00B7Q, Q a random orthogonal matrix; n = %1 "
              "units) reads the same %2 vectors of width %3 as layer %4's attention (%5). Token j reaches row i "
              "through i \u2212 j of its steps, and each state waits for the one before; attention reaches every key "
              "in one step, and each of a transformer's %6 blocks computes every position at once. Middle: x_0's "
              "reach on h_%7 is %8 than x_%7's own, under the bound \u03C1^(i\u2212j)\u2016U\u2016_F (|tanh\u2032| "
              "\u2264 1; here it averages %9), which no training of W lifts. %10. Work: the RNN %11 "
              "multiply\u2013adds in %2 dependent steps; the attention layer %12, all rows at once, growing as "
              "T\u00B2.")
        .arg(r.hidden)
        .arg(T)
        .arg(r.width)
        .arg(c.layer)
        .arg(QString::fromStdString(c.input))
        .arg(c.blocks)
        .arg(i)
        .arg(fallText, formatNumber(r.meanSlope, 3), strongest, formatNumber(c.rnnWork, 3),
            formatNumber(c.attentionWork, 3));
}

void RecurrenceView::labelTokenAxes()
{
    const int tokens = m_shown.rnn.tokens;
    const QStringList labels = tokenLabels(m_input, tokens);
    for (const QPointer<QCPAxisRect> &rect : m_panels)
        if (rect)
            setTokenTicks(rect->axis(QCPAxis::atBottom), labels, tokens, std::max(100, width() / 3 - 100), true, true);
}

void RecurrenceView::resizeEvent(QResizeEvent *event)
{
    AnalysisPlotView::resizeEvent(event);
    labelTokenAxes();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void RecurrenceView::showValueAt(QMouseEvent *event)
{
    QString text;
    const RnnReach &r = m_shown.rnn;
    for (const QPointer<QCPAxisRect> &rect : m_panels) {
        if (!rect || !rect->rect().contains(event->pos()))
            continue;
        const int j = int(std::lround(rect->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
        if (j < 0 || j >= r.tokens)
            break;
        const QString reach = j <= r.query && std::isfinite(r.log10Reach[j])
            ? tr("the RNN reaches h_%1 from it through %2 recurrent steps, \u2016\u2202h_%1/\u2202x_%3\u2016 = "
                 "10^%4 (bound 10^%5)")
                  .arg(r.query)
                  .arg(r.query - j)
                  .arg(j)
                  .arg(formatNumber(r.log10Reach[j], 3), formatNumber(r.log10Bound[j], 3))
            : j <= r.query ? tr("the RNN's reach from it is exactly 0")
                           : tr("the RNN reads it after row %1").arg(r.query);
        text = tr("Token %1 '%2': %3; head %4 gives it weight %5 from row %6, in one step. Its own state exists after "
                  "%7 RNN steps, or after %8 transformer blocks.")
                   .arg(j)
                   .arg(tokenLabel(m_input, j))
                   .arg(reach)
                   .arg(m_shown.head)
                   .arg(formatPercent(j < int(m_shown.attention.size()) ? m_shown.attention[j] : 0.0))
                   .arg(r.query)
                   .arg(j + 1)
                   .arg(m_shown.blocks);
    }
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, plot());
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::recurrence::makeView(QWidget *parent)
{
    return std::make_unique<RecurrenceView>(parent);
}
