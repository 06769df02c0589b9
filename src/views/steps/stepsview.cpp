#include "steps/stepsview.h"

#include "views/palette.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

QString modelName(const StepCurve &c)
{
    return QString::fromStdString(c.sweep.model);
}

// "45.3 % of next tokens after one application, 51.7 % after the trained 6 and 51.7 % after 16"
QString accuracyText(const StepCurve &c)
{
    const std::vector<Evaluation> &s = c.sweep.scores;
    QString text = QObject::tr("%1 of next tokens after one application").arg(formatPercent(s.front().tokenAccuracy));
    if (c.sweep.trained > 1 && c.sweep.trained <= int(s.size()))
        text += QObject::tr(", %1 after the trained %2")
                    .arg(formatPercent(s[size_t(c.sweep.trained - 1)].tokenAccuracy))
                    .arg(c.sweep.trained);
    if (int(s.size()) > c.sweep.trained)
        text += QObject::tr(" and %1 after %2").arg(formatPercent(s.back().tokenAccuracy)).arg(s.size());
    return text;
}

} // namespace

StepsView::StepsView(QWidget *parent)
    : ResultPlotView(parent)
{
    plot()->setToolTip(tr("Left: the task's held-out accuracy with the shared block applied that many times; the "
                          "dotted line is the count it was trained with. Right: how far each application moves a "
                          "token's residual stream on the Input box's text"));
}

QString StepsView::pendingText() const
{
    return tr("Scoring the task with the shared block applied 1 \u2026 S times\u2026");
}

QString StepsView::progressFormat() const
{
    return tr("%v of %m step counts scored");
}

void StepsView::drawAccuracy(const StepsAnalysis &a)
{
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    std::vector<QCPAbstractPlottable *> entries;
    for (size_t m = 0; m < a.curves.size(); ++m) {
        const StepCurve &c = a.curves[m];
        const QColor colour = seriesColours().at(int(m));
        auto *g = new QCPGraph(x, y);
        for (size_t s = 0; s < c.sweep.scores.size(); ++s)
            g->addData(double(s + 1), 100.0 * c.sweep.scores[s].tokenAccuracy);
        g->setPen(QPen(colour, 2.5));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, 7));
        g->setName(tr("%1 (trained with %2)").arg(modelName(c)).arg(c.sweep.trained));
        entries.push_back(g);
        addReferenceLine(rect, Qt::Vertical, c.sweep.trained, QPen(colour, 1.5, Qt::DotLine));
    }
    x->setRange(0.5, a.steps + 0.5);
    setIntegerTicks(x, std::max(1, a.steps / 12));
    x->setLabel(tr("applications of the block, S"));
    y->setRange(0, 100);
    y->setLabel(tr("held-out token accuracy (%)"));
    setPanelTitle(rect, tr("The task's accuracy after S applications"));
    addPanelLegend(rect, entries);
}

void StepsView::drawChange(const StepsAnalysis &a)
{
    QCPAxisRect *rect = addAxisRect(0, 1);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    double low = 1, high = 0;
    std::vector<QCPAbstractPlottable *> entries;
    for (size_t m = 0; m < a.curves.size(); ++m) {
        const StepCurve &c = a.curves[m];
        const QColor colour = seriesColours().at(int(m));
        auto *g = new QCPGraph(x, y);
        for (size_t n = 0; n < c.change.size(); ++n)
            if (c.change[n] > 0) {
                g->addData(double(n + 1), c.change[n]);
                low = std::min(low, c.change[n]);
                high = std::max(high, c.change[n]);
            }
        g->setPen(QPen(colour, 2.5));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, colour, colour, 7));
        g->setName(modelName(c));
        entries.push_back(g);
    }
    if (!(high > 0))
        low = 0.01, high = 1;
    x->setRange(0.5, a.steps + 0.5);
    setIntegerTicks(x, std::max(1, a.steps / 12));
    x->setLabel(tr("application n"));
    y->setScaleType(QCPAxis::stLogarithmic);
    y->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    y->setRange(low / 1.6, high * 1.6);
    y->setLabel(
        tr("\u2016X\u2099 \u2212 X\u2099\u208B\u2081\u2016 / \u2016X\u2099\u208B\u2081\u2016, mean over tokens"));
    setPanelTitle(rect, tr("How far application n moves the stream (the input)"));
    addPanelLegend(rect, entries);
}

QString StepsView::draw(const StepsAnalysis &a)
{
    setTitle(tr("One shared block applied 1 \u2026 %1 times").arg(a.steps));
    drawAccuracy(a);
    drawChange(a);
    QString text = tr("A Universal Transformer (Dehghani et al. 2019) applies one block's weights again and again, so "
                      "its depth is chosen when it runs. ");
    for (const StepCurve &c : a.curves) {
        text += tr("%1 names %2 (%3 held-out examples per count). ")
                    .arg(modelName(c), accuracyText(c))
                    .arg(c.sweep.examples);
        if (c.change.size() > 1)
            text += tr("Application 1 moves a token's stream by %1 of its size, application %2 by %3. ")
                        .arg(formatPercent(c.change.front()))
                        .arg(c.change.size())
                        .arg(formatPercent(c.change.back()));
    }
    text += tr("With halting (adaptive computation time) the output reads a token's stream only up to the application "
               "where it halts, so more applications change only the tokens still running; without halting the output "
               "reads the stream after the last application, wherever that has moved it.");
    return text;
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::steps::makeView(QWidget *parent)
{
    return std::make_unique<StepsView>(parent);
}
