#include "positionloss/positionlossview.h"

#include "views/palette.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

using views::positionloss::PositionBin;

QString nats(double loss)
{
    return QObject::tr("%1 nats").arg(loss, 0, 'f', 2);
}

QString tokensText(const PositionBin &b)
{
    return b.first == b.last ? QObject::tr("token %1").arg(b.first)
                             : QObject::tr("tokens %1\u2013%2").arg(b.first).arg(b.last);
}

QString curveName(const PositionLossCurve &c)
{
    return c.windows > 0 ? QObject::tr("%1, %2 held-out windows").arg(QString::fromStdString(c.model)).arg(c.windows)
                         : QObject::tr("%1, the Input box's text").arg(QString::fromStdString(c.model));
}

// "austen-long, 32 held-out windows of 1024: 3.21 nats at token 1, 1.35 at tokens 16–23 and 1.12 at 768–1023. Its
// in-context learning score, the loss at token 500 less that at token 50, is −0.08 nats."
QString curveText(const PositionLossCurve &c, bool sayWindow)
{
    const std::vector<PositionBin> bins = views::positionloss::binned(c.loss);
    if (bins.empty())
        return QObject::tr("%1: no position scored. ").arg(curveName(c));
    const PositionBin &first = bins.front(), &middle = bins[bins.size() / 2], &last = bins.back();
    QString text = QObject::tr("%1 (%2 positions): %3 at %4, %5 at %6 and %7 at %8. ")
                       .arg(curveName(c))
                       .arg(c.loss.size())
                       .arg(nats(first.loss), tokensText(first), nats(middle.loss), tokensText(middle), nats(last.loss),
                           tokensText(last));
    if (c.slidingWindow > 0 && c.slidingWindow < int(c.loss.size()) && sayWindow)
        text += QObject::tr("%1 of its %2 layers see only the last %3 tokens (dotted). ")
                    .arg(c.windowedLayers)
                    .arg(c.layers)
                    .arg(c.slidingWindow);
    int late = 0, early = 0;
    const double score = views::positionloss::inContextScore(c.loss, &late, &early);
    if (c.windows > 0 && std::isfinite(score) && late > early) { // one text is too noisy for it
        text += QObject::tr("In-context learning score, token %1 against token %2 (each \u00b110 %): %3")
                    .arg(late)
                    .arg(early)
                    .arg(score < 0 ? QObject::tr("%1 nats lower").arg(-score, 0, 'f', 3)
                                   : QObject::tr("%1 nats higher").arg(score, 0, 'f', 3));
        if (std::isfinite(c.scoreError))
            text += QObject::tr(" \u00b1 %1%2")
                        .arg(c.scoreError, 0, 'f', 3)
                        .arg(std::fabs(score) < 2 * c.scoreError ? QObject::tr(", within twice its error of zero")
                                                                 : QString());
        text += QStringLiteral(". ");
    }
    return text;
}

} // namespace

PositionLossView::PositionLossView(QWidget *parent)
    : ResultPlotView(parent)
{
    plot()->setToolTip(tr("The next token's loss (cross-entropy, nats) against how many tokens the model has read, "
                          "positions gathered on a logarithmic scale. Solid: held-out windows of the model's task; "
                          "dashed: the Input box's text. Hover a point for its numbers"));
    plot()->setMouseTracking(true);
    connect(plot(), &QCustomPlot::mouseMove, this, [this](QMouseEvent *event) { showPointAt(event->pos()); });
}

QString PositionLossView::pendingText() const
{
    return tr("Scoring each position of held-out windows\u2026");
}

QString PositionLossView::progressFormat() const
{
    return tr("%v of %m parts scored");
}

void PositionLossView::showPointAt(const QPoint &pos)
{
    double best = 12 * 12; // within 12 px
    QString text;
    for (int g = 0; g < plot()->graphCount(); ++g) {
        QCPGraph *graph = plot()->graph(g);
        for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
            const QPointF at = graph->coordsToPixels(it->key, it->value);
            const double d = std::pow(at.x() - pos.x(), 2) + std::pow(at.y() - pos.y(), 2);
            if (d < best) {
                best = d;
                text = graph->property("bins").toStringList().value(int(it - graph->data()->constBegin()));
            }
        }
    }
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(plot()->mapToGlobal(pos), text, plot());
}

QString PositionLossView::draw(const PositionLossAnalysis &a)
{
    setTitle(tr("The next token's loss by how many tokens were read"));
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    std::vector<QCPAbstractPlottable *> entries;
    double high = 0, low = 1e9;
    int longest = 1, taskCurves = 0;
    for (const PositionLossCurve &c : a.curves) {
        const QColor colour = seriesColours().at(c.windows > 0 ? taskCurves++ : 0);
        auto *g = new QCPGraph(x, y);
        QStringList bins;
        for (const PositionBin &b : views::positionloss::binned(c.loss)) {
            g->addData(std::sqrt(double(b.first) * double(b.last)), b.loss);
            bins << tr("%1\n%2: %3").arg(curveName(c), tokensText(b), nats(b.loss));
            high = std::max(high, b.loss);
            low = std::min(low, b.loss);
        }
        g->setProperty("bins", bins);
        g->setPen(QPen(colour, c.windows > 0 ? 2.5 : 1.8, c.windows > 0 ? Qt::SolidLine : Qt::DashLine));
        g->setScatterStyle(
            QCPScatterStyle(c.windows > 0 ? QCPScatterStyle::ssDisc : QCPScatterStyle::ssCircle, colour, colour, 6));
        g->setName(curveName(c));
        entries.push_back(g);
        longest = std::max(longest, int(c.loss.size()));
        if (c.windows > 0 && c.slidingWindow > 0 && c.slidingWindow < int(c.loss.size()))
            addReferenceLine(rect, Qt::Vertical, c.slidingWindow, QPen(colour, 1.5, Qt::DotLine));
    }
    x->setScaleType(QCPAxis::stLogarithmic);
    x->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    x->setRange(0.8, longest * 1.25);
    x->setLabel(tr("tokens read before the predicted one (log scale)"));
    y->setRange(high > low ? std::max(0.0, low - 0.1 * (high - low)) : 0, high > low ? high + 0.1 * (high - low) : 1);
    y->setLabel(tr("next-token loss (nats)"));
    setPanelTitle(rect, tr("Loss at each position, gathered two bins a doubling"));
    addPanelLegend(rect, entries);

    QString text;
    for (size_t i = 0; i < a.curves.size(); ++i) // a model's window said once, at its first curve
        text += curveText(a.curves[i],
            std::none_of(a.curves.begin(), a.curves.begin() + long(i),
                [&](const PositionLossCurve &o) { return o.model == a.curves[i].model; }));
    text += tr("A model that uses what it has read predicts later tokens better: the curve falls as far back as the "
               "model can use, and a flat tail means earlier text no longer helps (Olsson et al. 2022 tie the fall "
               "to induction heads).");
    return text;
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::positionloss::makeView(QWidget *parent)
{
    return std::make_unique<PositionLossView>(parent);
}
