#include "tokenreduction/tokenreductionview.h"

#include "tokenreduction/tokenreduction.h"
#include "views/colormaps.h"
#include "views/heatmapticks.h"
#include "views/palette.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

const QColor &kEliminated = palette::alert;

QString rankingName(TokenRetention::Rank rank)
{
    return rank == TokenRetention::Rank::Random ? QObject::tr("at random (a control)")
        : rank == TokenRetention::Rank::Targets ? QObject::tr("by the attention the [MASK]s pay (not PoWER-BERT)")
                                                : QObject::tr("by significance");
}

// The sweep's point whose rate is nearest a share of the tokens kept after layer 0.
const ReductionPoint &pointAt(const ReductionSweep &s, double rate)
{
    return *std::min_element(
        s.points.begin(), s.points.end(), [rate](const ReductionPoint &a, const ReductionPoint &b) {
            return std::abs(a.rate - rate) < std::abs(b.rate - rate);
        });
}

} // namespace

TokenReductionView::TokenReductionView(QWidget *parent)
    : ResultPlotView(parent)
{
    plot()->setToolTip(tr("Top: after each layer only the tokens that receive the most attention go on (PoWER-BERT); "
                          "bottom: what that costs the model's task on held-out text"));
}

QString TokenReductionView::pendingText() const
{
    return tr("Eliminating tokens layer by layer, and scoring held-out text at every rate\u2026");
}

QString TokenReductionView::draw(const TokenReductionAnalysis &a)
{
    const TokenSurvival &s = a.survival;
    const int T = int(s.tokens.size()), L = int(s.kept.size()) + 1;
    setTitle(tr("Token reduction (PoWER-BERT) \u00B7 %1 \u00B7 kept after each layer: %2")
                 .arg(m_input.model ? QString::fromStdString(m_input.model->name) : QString(),
                     QString::fromStdString(retentionScheduleText(s.keep))));
    drawSurvival(s);
    std::vector<int> counts;
    for (int j = 0; j + 1 < L; ++j)
        counts.push_back(s.keptAfter(j));
    const double work = retainedWork(counts, T, L);
    std::vector<const ReductionSweep *> sweeps;
    for (const auto &sweep : a.sweeps)
        sweeps.push_back(sweep.get());
    drawSweeps(sweeps, work);

    QString countsText = QString::number(T);
    for (int c : counts)
        countsText += QStringLiteral(" \u2192 ") + QString::number(c);
    QString text
        = tr("sig(k) = \u03A3\u2095 \u03A3\u1D62 A\u2095[i, k]: the attention token k receives over every head "
             "and every query still present. After each layer the least significant tokens are eliminated "
             "and later layers attend only to the rest; [MASK] and [CLS] always stay. This input, ranked %1: "
             "%2 tokens, %3 of the work. ")
              .arg(rankingName(s.rank), countsText, formatPercent(work));
    for (const ReductionSweep *sweep : sweeps) {
        const ReductionPoint &p = pointAt(*sweep, s.keep.front()), &whole = sweep->points.front();
        text += tr("At rate %1, %2 gets %3 right (at random %4, by the targets' attention %5; every token %6). ")
                    .arg(formatNumber(p.rate, 2), QString::fromStdString(sweep->model),
                        formatPercent(p.significance.tokenAccuracy), formatPercent(p.random.tokenAccuracy),
                        formatPercent(p.targets.tokenAccuracy), formatPercent(whole.significance.tokenAccuracy));
    }
    if (!sweeps.empty())
        text += tr("%1 held-out windows a point; the app masks eliminated keys rather than removing them, so it "
                   "computes as much.")
                    .arg(TokenReductionAnalysis::kExamples);
    return text;
}

void TokenReductionView::drawSurvival(const TokenSurvival &s)
{
    const int T = int(s.tokens.size()), rows = int(s.kept.size());
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    std::vector<double> ratio(size_t(rows) * size_t(T)); // significance over the layer's mean; NaN: gone earlier
    std::vector<std::pair<int, int>> eliminated; // (token, layer) dropped by that layer
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    for (int j = 0; j < rows; ++j) {
        const std::vector<bool> &kept = s.kept[size_t(j)];
        const std::vector<bool> *before = j > 0 ? &s.kept[size_t(j - 1)] : nullptr;
        const int present = before ? int(std::count(before->begin(), before->end(), true)) : T;
        double total = 0;
        for (int k = 0; k < T; ++k)
            total += s.significance[size_t(j)][size_t(k)];
        const double mean = total / std::max(present, 1);
        for (int k = 0; k < T; ++k) {
            const bool here = !before || (*before)[size_t(k)];
            ratio[size_t(j) * size_t(T) + size_t(k)]
                = here && mean > 0 ? double(s.significance[size_t(j)][size_t(k)]) / mean : std::nan("");
            if (here && !kept[size_t(k)])
                eliminated.emplace_back(k, j);
        }
        ticks->addTick(j, tr("layer %1: %2 \u2192 %3").arg(j).arg(present).arg(s.keptAfter(j)));
    }
    QCPColorGradient gradient = colormap(m_spec.colormap);
    gradient.setNanHandling(QCPColorGradient::nhNanColor);
    gradient.setNanColor(palette::okabeGrey); // mid grey: apart from the colour map's ends in either palette
    // Most tokens lie within 3× the mean; the few above share the top colour. Layer 0 on top.
    QCPColorMap *map = addMatrixMap(
        rect, rows, T, [&](int j, int k) { return ratio[size_t(j) * size_t(T) + size_t(k)]; }, gradient, 0, 3);
    auto *dropped = new QCPGraph(x, y); // over the map
    for (const auto &[k, j] : eliminated)
        dropped->addData(k, j);
    dropped->setLineStyle(QCPGraph::lsNone);
    dropped->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(kEliminated, 2.5), Qt::NoBrush, 10));
    y->setTicker(ticks);
    m_map = rect;
    m_tokens = T;
    labelTokens();
    addColorScale(0, 1, map, rect, tr("sig \u00D7 layer's mean"));
    setPanelTitle(rect, tr("Which tokens go on after each layer (\u00D7: eliminated by this layer; grey: earlier)"));
}

void TokenReductionView::labelTokens()
{
    if (!m_map)
        return;
    // The map spans the view but for its row labels on the left and its colour scale on the right.
    setTokenTicks(m_map->axis(QCPAxis::atBottom), tokenLabels(m_input, m_tokens), m_tokens,
        std::max(200, width() - 240), true, false);
}

void TokenReductionView::resizeEvent(QResizeEvent *event)
{
    AnalysisPlotView::resizeEvent(event);
    labelTokens();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void TokenReductionView::drawSweeps(const std::vector<const ReductionSweep *> &sweeps, double inputWork)
{
    QCPAxisRect *rect = addAxisRect(1, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    setPanelTitle(rect,
        tr("Held-out accuracy against the work left: \u25CF by significance, \u25A0 at random, "
           "\u25B2 by the targets' attention"));
    std::vector<QCPAbstractPlottable *> entries;
    for (size_t m = 0; m < sweeps.size(); ++m) {
        const ReductionSweep &s = *sweeps[m];
        const QColor colour = seriesColours().at(int(m));
        const auto curve
            = [&](Evaluation ReductionPoint::*score, Qt::PenStyle style, QCPScatterStyle::ScatterShape shape) {
                  auto *g = new QCPGraph(x, y);
                  for (const ReductionPoint &p : s.points)
                      g->addData(100.0 * p.work, 100.0 * (p.*score).tokenAccuracy);
                  g->setPen(QPen(colour, 2.5, style));
                  g->setScatterStyle(QCPScatterStyle(shape, colour, colour, 7));
                  return g;
              };
        QCPGraph *main = curve(&ReductionPoint::significance, Qt::SolidLine, QCPScatterStyle::ssDisc);
        curve(&ReductionPoint::random, Qt::DashLine, QCPScatterStyle::ssSquare);
        curve(&ReductionPoint::targets, Qt::DotLine, QCPScatterStyle::ssTriangle);
        main->setName(QString::fromStdString(s.model));
        entries.push_back(main); // the rankings are told apart by the panel's title
    }
    addReferenceLine(rect, Qt::Vertical, 100.0 * inputWork, QPen(themeColors(m_spec.theme).text, 1.5, Qt::DashLine));
    x->setRange(20, 102);
    x->setLabel(tr("work left: token-positions processed, % of the whole model's (dashed: this input)"));
    y->setRange(0, 100);
    y->setLabel(tr("targets right (%)"));
    if (sweeps.empty())
        setPanelTitle(rect, tr("No held-out sweep: the model was not trained on a task of its own"));
    else
        addPanelLegend(rect, entries);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::tokenreduction::makeView(QWidget *parent)
{
    return std::make_unique<TokenReductionView>(parent);
}
