#include "layerdrop/layerdropview.h"

#include "layerdrop/layerdrop.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

namespace atlas {

namespace {

// The depth both rules reach together that tells the most: half the blocks, kept every other one.
const PrunedDepth &halfDepth(const DepthSweep &s)
{
    return s.everyOther[size_t(std::max(0, s.layers / 2 - 1))];
}

} // namespace

LayerDropView::LayerDropView(QWidget *parent)
    : ResultPlotView(parent)
{
    plot()->setToolTip(tr("Each point: the model's task on held-out examples with only that many blocks run; a "
                          "dropped block passes its input on unchanged"));
}

QString LayerDropView::pendingText() const
{
    return tr("Scoring the task with 1 \u2026 L blocks kept, two ways\u2026");
}

QString LayerDropView::draw(const LayerDropAnalysis &a)
{
    setTitle(a.sweeps.size() == 2
            ? tr("Blocks pruned: %1 against %2")
                  .arg(QString::fromStdString(a.sweeps[0].model), QString::fromStdString(a.sweeps[1].model))
            : tr("Blocks pruned: %1").arg(QString::fromStdString(a.sweeps[0].model)));
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    std::vector<QCPAbstractPlottable *> entries;
    int most = 1;
    for (size_t m = 0; m < a.sweeps.size(); ++m) {
        const DepthSweep &s = a.sweeps[m];
        most = std::max(most, s.layers);
        const QColor colour = seriesColours().at(int(m));
        const auto curve = [&](const std::vector<PrunedDepth> &points, Qt::PenStyle style,
                               QCPScatterStyle::ScatterShape shape, const QString &rule) {
            auto *g = new QCPGraph(x, y);
            for (const PrunedDepth &p : points)
                g->addData(p.kept, 100.0 * p.score.tokenAccuracy);
            g->setPen(QPen(colour, 2.5, style));
            g->setScatterStyle(QCPScatterStyle(shape, colour, colour, 7));
            g->setName(QString::fromStdString(s.model) + QStringLiteral(": ") + rule);
            entries.push_back(g);
        };
        curve(s.first, Qt::SolidLine, QCPScatterStyle::ssDisc, tr("first k blocks kept"));
        curve(s.everyOther, Qt::DashLine, QCPScatterStyle::ssSquare, tr("every other (k spread evenly)"));
    }
    x->setRange(0.7, most + 0.3);
    setIntegerTicks(x);
    x->setLabel(tr("blocks kept, k"));
    y->setRange(0, 100);
    y->setLabel(tr("held-out token accuracy (%)"));
    setPanelTitle(rect, tr("The task's accuracy with only k blocks run"));
    addPanelLegend(rect, entries);

    QString text = tr("A dropped block passes its input on unchanged (X\u1D62\u208A\u2081 = X\u1D62). ");
    for (const DepthSweep &s : a.sweeps) {
        const PrunedDepth &half = halfDepth(s);
        text += tr("%1, keeping %2 of its %3 blocks every other one: %4 of next %5 right, against %6 with all of "
                   "them. ")
                    .arg(QString::fromStdString(s.model))
                    .arg(half.kept)
                    .arg(s.layers)
                    .arg(formatPercent(half.score.tokenAccuracy), s.task == "chars" ? tr("characters") : tr("tokens"),
                        formatPercent(s.first.back().score.tokenAccuracy));
    }
    text += tr("LayerDrop (Fan et al. 2019) trains with each block dropped at random, so that the blocks do not "
               "depend on one another and any subset still works. %1 held-out examples per point.")
                .arg(LayerDropAnalysis::kExamples);
    return text;
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::layerdrop::makeView(QWidget *parent)
{
    return std::make_unique<LayerDropView>(parent);
}
