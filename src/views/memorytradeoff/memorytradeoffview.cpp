#include "memorytradeoff/memorytradeoffview.h"
#include "views/byteunits.h"

#include "memorytradeoff/memorytradeoff.h"
#include "views/memorystrategystyle.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <algorithm>

namespace atlas {

namespace {

// Which k to label: all of a short sweep; of a long one 1, 2, ⌈√L⌉ and L.
bool labelled(int k, const MemoryTradeoffAnalysis &a)
{
    return a.depth <= 6 || k == 1 || k == a.sqrtK || k == a.depth;
}

} // namespace

MemoryTradeoffView::MemoryTradeoffView(QWidget *parent)
    : ResultPlotView(parent)
{
}

QString MemoryTradeoffView::pendingText() const
{
    return tr("Measuring… training steps of a model of this shape under checkpointing at every k");
}

QString MemoryTradeoffView::progressFormat() const
{
    return tr("%v of %m points measured");
}

QString MemoryTradeoffView::draw(const MemoryTradeoffAnalysis &a)
{
    setTitle(tr("Checkpoint every k = 1 … %1 blocks: memory against time").arg(a.depth));
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const bool dark = m_spec.theme == "dark";
    const ThemeColors colors = themeColors(m_spec.theme);
    double minMs = 1e300, maxMs = 1e-3, maxBytes = 1e-3;
    const SweepPoint *plain = nullptr, *atSqrt = nullptr, *reversible = nullptr;
    QVector<double> ms, bytes;
    for (const SweepPoint &p : a.points) {
        maxMs = std::max(maxMs, p.stepMs);
        minMs = std::min(minMs, p.stepMs);
        maxBytes = std::max(maxBytes, double(p.peakActivationBytes) / kMiB);
        if (p.strategy == MemoryStrategy::Checkpoint) {
            ms << p.stepMs;
            bytes << double(p.peakActivationBytes) / kMiB;
            atSqrt = p.checkpointEvery == a.sqrtK ? &p : atSqrt;
        }
        plain = p.strategy == MemoryStrategy::Plain ? &p : plain;
        reversible = p.strategy == MemoryStrategy::Reversible ? &p : reversible;
    }
    auto *curve = new QCPCurve(x, y); // in k order, not sorted by time
    curve->setData(ms, bytes);
    const QColor checkpointColor = strategyColor(MemoryStrategy::Checkpoint, dark);
    curve->setPen(QPen(checkpointColor, 1.5));
    curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, checkpointColor, checkpointColor, 7));
    curve->setName(tr("checkpoint every k"));
    auto label = [&](const SweepPoint &p, const QString &text, bool bold, bool left) {
        auto *t = new QCPItemText(plot());
        t->setClipAxisRect(rect);
        t->position->setAxes(x, y);
        t->position->setCoords(p.stepMs, double(p.peakActivationBytes) / kMiB);
        t->setPositionAlignment((left ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignBottom);
        t->setPadding(left ? QMargins(0, 0, 6, 2) : QMargins(6, 0, 0, 2));
        t->setText(text);
        t->setColor(colors.text);
        t->setFont(sizedFont(font(), 9, bold));
    };
    for (const SweepPoint &p : a.points)
        if (p.strategy == MemoryStrategy::Checkpoint && labelled(p.checkpointEvery, a))
            label(p,
                p.checkpointEvery == a.sqrtK ? tr("k = %1 = ⌈√L⌉").arg(p.checkpointEvery)
                                             : tr("k = %1").arg(p.checkpointEvery),
                p.checkpointEvery == a.sqrtK, false);
    for (const SweepPoint *p : {plain, reversible}) {
        if (!p)
            continue;
        QCPGraph *g = plot()->addGraph(x, y);
        const QColor color = strategyColor(p->strategy, dark);
        g->setData({p->stepMs}, {double(p->peakActivationBytes) / kMiB});
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, color, color, 10));
        g->setName(QString::fromStdString(memoryStrategyName(p->strategy)));
        label(*p, QString::fromStdString(memoryStrategyName(p->strategy)), true, true);
    }
    if (atSqrt) {
        QCPGraph *ring = plot()->addGraph(x, y);
        ring->setData({atSqrt->stepMs}, {double(atSqrt->peakActivationBytes) / kMiB});
        ring->setLineStyle(QCPGraph::lsNone);
        ring->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(colors.text, 2), Qt::NoBrush, 18));
        ring->setName(tr("⌈√L⌉, the default"));
    }
    // The spread of each point's step times: its middle half (first to third quartile), as a horizontal bar.
    const auto spreadBars = [&](QCPAbstractPlottable *of, const std::vector<const SweepPoint *> &points) {
        auto *bars = new QCPErrorBars(x, y);
        bars->setErrorType(QCPErrorBars::etKeyError);
        bars->setDataPlottable(of);
        QVector<double> below, above;
        for (const SweepPoint *p : points) {
            below << p->stepMs - p->stepMsLow;
            above << p->stepMsHigh - p->stepMs;
        }
        bars->setData(below, above);
        bars->setPen(QPen(colors.text, 1));
        bars->removeFromLegend();
    };
    std::vector<const SweepPoint *> checkpoints;
    for (const SweepPoint &p : a.points)
        if (p.strategy == MemoryStrategy::Checkpoint)
            checkpoints.push_back(&p);
    spreadBars(curve, checkpoints);
    for (int i = 0; i < plot()->graphCount(); ++i)
        for (const SweepPoint *p : {plain, reversible})
            if (p && plot()->graph(i)->name() == QString::fromStdString(memoryStrategyName(p->strategy)))
                spreadBars(plot()->graph(i), {p});
    for (const SweepPoint &p : a.points) {
        maxMs = std::max(maxMs, p.stepMsHigh);
        minMs = std::min(minMs, p.stepMsLow);
    }
    x->setLabel(tr("step time (ms: median of at least 5 steps; bar: their middle half)"));
    y->setLabel(tr("peak (MiB)"));
    const double spread = std::max(maxMs - minMs, 0.05 * maxMs);
    x->setRange(std::max(0.0, minMs - 0.15 * spread), maxMs + 0.35 * spread); // room for the labels
    y->setRange(0, maxBytes * 1.15);
    addLegend(4);

    QString text
        = tr("A random-weight model of this shape, %1 blocks, one recorded step of %2 tokens per point. Small k "
             "keeps many boundaries; large k keeps few but recomputes long segments, live at once. Where two "
             "points' time bars overlap, this machine's timing cannot tell their times apart.")
              .arg(a.depth)
              .arg(a.tokens);
    if (plain && atSqrt && plain->peakActivationBytes > 0 && plain->stepMs > 0)
        text += tr(" k = ⌈√L⌉ = %1: %2 of plain's peak in %3× its time.")
                    .arg(a.sqrtK)
                    .arg(formatPercent(double(atSqrt->peakActivationBytes) / double(plain->peakActivationBytes)),
                        formatNumber(atSqrt->stepMs / plain->stepMs, 3));
    if (m_input.model && m_input.model->config.isEncoderDecoder())
        text += tr(" %1 blocks in each stack, encoder and decoder, each checkpointed every k.").arg(a.depth);
    if (!a.withoutReversible.empty())
        text += tr(" No reversible blocks: %1.").arg(QString::fromStdString(a.withoutReversible));
    return text;
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::memorytradeoff::makeView(QWidget *parent)
{
    return std::make_unique<MemoryTradeoffView>(parent);
}
