#include "views/memorydepthview.h"
#include "views/byteunits.h"

#include "view/viewanalysis.h"
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

const SweepPoint *pointAt(const std::vector<SweepPoint> &points, int depth, MemoryStrategy s)
{
    for (const SweepPoint &p : points)
        if (p.depth == depth && p.strategy == s)
            return &p;
    return nullptr;
}

} // namespace

MemoryDepthView::MemoryDepthView(QWidget *parent)
    : AnalysisPlotView(parent)
{
}

bool MemoryDepthView::isCurrent(const ViewAnalysis &result) const
{
    const auto *a = dynamic_cast<const MemoryDepthAnalysis *>(&result);
    return a && a->asked == MemorySweepRequest {m_spec.depth, m_spec.ffnChunks};
}

QString MemoryDepthView::draw(const ViewAnalysis &result)
{
    const auto &a = static_cast<const MemoryDepthAnalysis &>(result);
    setTitle(tr("Peak activations and step time against depth"));
    QCPAxisRect *memory = addAxisRect(0, 0), *time = addAxisRect(0, 1);
    const bool dark = m_spec.theme == "dark";
    double topBytes = 1e-3, topMs = 1e-3;
    for (MemoryStrategy s : kMemoryStrategies) {
        if (s == MemoryStrategy::Reversible && !a.withoutReversible.empty())
            continue;
        QVector<double> depth, bytes, ms;
        for (const SweepPoint &p : a.points)
            if (p.strategy == s) {
                depth << p.depth;
                bytes << double(p.peakActivationBytes) / kMiB;
                ms << p.stepMs;
                topBytes = std::max(topBytes, bytes.back());
                topMs = std::max(topMs, ms.back());
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
        }
    }
    memory->axis(QCPAxis::atBottom)->setLabel(tr("depth L (blocks)"));
    memory->axis(QCPAxis::atLeft)->setLabel(tr("peak (MiB)"));
    time->axis(QCPAxis::atBottom)->setLabel(tr("depth L (blocks)"));
    time->axis(QCPAxis::atLeft)->setLabel(tr("step (ms)"));
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
        = tr("Random-weight models of this shape (%1 heads, d_model %2, d_ff %3), one recorded step of %4 tokens "
             "each: dots measured, dashes fitted.")
              .arg(c.heads)
              .arg(c.dModel)
              .arg(c.dFF)
              .arg(a.tokens);
    if (plain && checkpoint && reversible && plain->peakActivationBytes > 0 && plain->stepMs > 0)
        text += tr(" Depth %1: checkpointing (k = %2) keeps %3 of plain's peak in %4× its time, reversible blocks "
                   "%5 in %6×.")
                    .arg(a.maxDepth)
                    .arg(checkpoint->checkpointEvery)
                    .arg(formatPercent(double(checkpoint->peakActivationBytes) / double(plain->peakActivationBytes)),
                        formatNumber(checkpoint->stepMs / plain->stepMs, 3),
                        formatPercent(double(reversible->peakActivationBytes) / double(plain->peakActivationBytes)),
                        formatNumber(reversible->stepMs / plain->stepMs, 3));
    else if (plain && checkpoint && plain->peakActivationBytes > 0 && plain->stepMs > 0)
        text += tr(" Depth %1: checkpointing (k = %2) keeps %3 of plain's peak in %4× its time.")
                    .arg(a.maxDepth)
                    .arg(checkpoint->checkpointEvery)
                    .arg(formatPercent(double(checkpoint->peakActivationBytes) / double(plain->peakActivationBytes)),
                        formatNumber(checkpoint->stepMs / plain->stepMs, 3));
    if (c.isEncoderDecoder())
        text += tr(" Depth L is L encoder and L decoder blocks.");
    if (!a.withoutReversible.empty())
        text += tr(" No reversible blocks: %1.").arg(QString::fromStdString(a.withoutReversible));
    return text;
}

} // namespace atlas
