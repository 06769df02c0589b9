#include "memorydepth/memorydepthview.h"
#include "views/byteunits.h"

#include "memorydepth/memorydepth.h"
#include "views/memorystrategystyle.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <algorithm>

namespace atlas {

namespace {

QString fitName(MemoryStrategy s, const DepthFit &fit)
{
    if (s == MemoryStrategy::Reversible)
        return QObject::tr("O(1): %1 MiB").arg(formatNumber(fit.constant / kMiB, 3));
    const QString growth = s == MemoryStrategy::Plain ? QStringLiteral("L") : QStringLiteral("√L");
    return QStringLiteral("O(%1): %2 + %3·%1 MiB")
        .arg(growth)
        .arg(formatNumber(fit.constant / kMiB, 3), formatNumber(fit.slope / kMiB, 3));
}

// "1.32× (1.25–1.40×)", the range over the middle halves of both points' steps; "about 1×" where they overlap.
QString ratioText(const TimeRatio &r)
{
    const QString range = QObject::tr("%1× (%2–%3× over the middle halves of their steps)")
                              .arg(formatNumber(r.median, 3), formatNumber(r.low, 3), formatNumber(r.high, 3));
    return r.overlaps ? range + QObject::tr(", which this machine's timing cannot tell from 1×") : range;
}

const SweepPoint *pointAt(const std::vector<SweepPoint> &points, int depth, MemoryStrategy s)
{
    for (const SweepPoint &p : points)
        if (p.depth == depth && p.strategy == s)
            return &p;
    return nullptr;
}

} // namespace

MemoryDepthView::MemoryDepthView(QWidget *parent)
    : ResultPlotView(parent)
{
}

QString MemoryDepthView::pendingText() const
{
    return tr("Measuring… training steps of models of this shape, 1 to %1 blocks deep, under each memory strategy")
        .arg(m_spec.depth > 0 ? m_spec.depth : (m_input.model ? m_input.model->config.layers : 0));
}

QString MemoryDepthView::progressFormat() const
{
    return tr("%v of %m points measured");
}

QString MemoryDepthView::draw(const MemoryDepthAnalysis &a)
{
    setTitle(tr("Peak activations and step time against depth"));
    QCPAxisRect *memory = addAxisRect(0, 0), *time = addAxisRect(0, 1);
    const bool dark = m_spec.theme == "dark";
    double topBytes = 1e-3, topMs = 1e-3;
    for (MemoryStrategy s : kMemoryStrategies) {
        if (s == MemoryStrategy::Reversible && !a.withoutReversible.empty())
            continue;
        QVector<double> depth, bytes, ms, below, above;
        for (const SweepPoint &p : a.points)
            if (p.strategy == s) {
                depth << p.depth;
                bytes << double(p.peakActivationBytes) / kMiB;
                ms << p.stepMs;
                below << p.stepMs - p.stepMsLow;
                above << p.stepMsHigh - p.stepMs;
                topBytes = std::max(topBytes, bytes.back());
                topMs = std::max(topMs, p.stepMsHigh);
            }
        const QColor color = strategyColor(s, dark);
        const DepthFit &fit = s == MemoryStrategy::Plain ? a.plain
            : s == MemoryStrategy::Checkpoint            ? a.checkpoint
                                                         : a.reversible;
        QVector<double> curveX, curveY;
        for (int i = 0; i <= 100; ++i) {
            const double L = 1 + (a.maxDepth - 1) * i / 100.0;
            curveX << L;
            curveY << fit.at(s, L) / kMiB;
        }
        QCPGraph *curve = plot()->addGraph(memory->axis(QCPAxis::atBottom), memory->axis(QCPAxis::atLeft));
        curve->setData(curveX, curveY, true);
        curve->setPen(QPen(color, 1.5, Qt::DashLine));
        curve->setName(QString::fromStdString(memoryStrategyName(s)) + QStringLiteral(" ") + fitName(s, fit));
        for (QCPAxisRect *rect : {memory, time}) {
            QCPGraph *g = plot()->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
            g->setData(depth, rect == memory ? bytes : ms, true);
            g->setPen(QPen(color, rect == memory ? 0 : 2));
            g->setLineStyle(rect == memory ? QCPGraph::lsNone : QCPGraph::lsLine);
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 8));
            g->setName(QString()); // the fitted curve's entry stands for its strategy
            if (rect == time) { // each point's spread: the middle half of its steps' times, as a vertical bar
                auto *bars = new QCPErrorBars(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
                bars->setErrorType(QCPErrorBars::etValueError);
                bars->setDataPlottable(g);
                bars->setData(below, above);
                bars->setPen(QPen(color, 1.5));
                bars->removeFromLegend();
            }
        }
    }
    memory->axis(QCPAxis::atBottom)->setLabel(tr("depth L (blocks)"));
    memory->axis(QCPAxis::atLeft)->setLabel(tr("peak (MiB)"));
    time->axis(QCPAxis::atBottom)->setLabel(tr("depth L (blocks)"));
    time->axis(QCPAxis::atLeft)->setLabel(tr("step (ms): median, bar the middle half"));
    for (QCPAxisRect *rect : {memory, time})
        rect->axis(QCPAxis::atBottom)->setRange(0, a.maxDepth + 1);
    memory->axis(QCPAxis::atLeft)->setRange(0, topBytes * 1.15);
    time->axis(QCPAxis::atLeft)->setRange(0, topMs * 1.15);
    addLegend(3);

    const SweepPoint *plain = pointAt(a.points, a.maxDepth, MemoryStrategy::Plain);
    const SweepPoint *checkpoint = pointAt(a.points, a.maxDepth, MemoryStrategy::Checkpoint);
    const SweepPoint *reversible = pointAt(a.points, a.maxDepth, MemoryStrategy::Reversible);
    const ModelConfig &c = m_input.model ? m_input.model->config : ModelConfig {};
    QString text
        = tr("Random-weight models of this shape (%1 heads, d_model %2, d_ff %3), steps of %4 tokens: dots measured "
             "(the peak of a recorded step; the median time of at least 5 steps), dashes fitted.")
              .arg(c.heads)
              .arg(c.dModel)
              .arg(c.dFF)
              .arg(a.tokens);
    if (plain && checkpoint && plain->peakActivationBytes > 0 && plain->stepMs > 0) {
        text += tr(" Depth %1: checkpointing (k = %2) keeps %3 of plain's peak in %4 its time")
                    .arg(a.maxDepth)
                    .arg(checkpoint->checkpointEvery)
                    .arg(formatPercent(double(checkpoint->peakActivationBytes) / double(plain->peakActivationBytes)),
                        ratioText(timeRatio(*checkpoint, *plain)));
        if (reversible)
            text
                += tr(", reversible blocks %1 in %2")
                       .arg(formatPercent(double(reversible->peakActivationBytes) / double(plain->peakActivationBytes)),
                           ratioText(timeRatio(*reversible, *plain)));
        text += tr(".");
    }
    if (c.isEncoderDecoder())
        text += tr(" Depth L is L encoder and L decoder blocks.");
    if (!a.withoutReversible.empty())
        text += tr(" No reversible blocks: %1.").arg(QString::fromStdString(a.withoutReversible));
    return text;
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::memorydepth::makeView(QWidget *parent)
{
    return std::make_unique<MemoryDepthView>(parent);
}
