#include "adaptivespan/adaptivespanview.h"

#include "adaptivespan/adaptivespan.h"
#include "views/colormaps.h"
#include "views/palette.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QMouseEvent>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

const QColor &kChosen = palette::alert;

// A head's bar sits at layer · (H + 1) + head: a gap between layers.
double barPosition(int layer, int head, int heads)
{
    return layer * (heads + 1) + head;
}

} // namespace

AdaptiveSpanView::AdaptiveSpanView(QWidget *parent)
    : ResultPlotView(parent)
{
    connect(plot(), &QCustomPlot::mousePress, this, &AdaptiveSpanView::chooseHeadAt);
    plot()->setToolTip(tr("Click a head's bar to see its attention under its span's mask"));
}

QString AdaptiveSpanView::pendingText() const
{
    return tr("Reading every head's span…");
}

QString AdaptiveSpanView::draw(const AdaptiveSpanAnalysis &result)
{
    const AdaptiveSpans &s = result.spans;
    const int layer = std::clamp(m_spec.layer, 0, int(s.heads.size()) - 1);
    const int head = std::clamp(m_spec.head, 0, int(s.heads[size_t(layer)].size()) - 1);
    const HeadSpan &chosen = s.heads[size_t(layer)][size_t(head)];
    setTitle(tr("Adaptive attention span \u00B7 R = %1, longest span S = %2").arg(s.ramp).arg(s.limit));
    drawSpans(s, layer, head);
    drawHead(s, layer, head);
    return tr("Each head weighs key j of query i by m(i \u2212 j) = clamp((R + z \u2212 (i \u2212 j)) / R, 0, 1) and "
              "renormalises (Sukhbaatar et al. 2019); training adds \u03BB \u00B7 mean z to the loss, so a span "
              "grows only where it lowers the loss more. The spans average %1 tokens; a head reaches on average %2 "
              "of a full context of %3, the share of attention's work and memory left when keys out of reach are "
              "skipped. Layer %4, head %5: z = %6, exactly 0 from %7 tokens back, its weight on average %8 tokens "
              "back.")
        .arg(formatNumber(s.meanSpan(), 3), formatPercent(s.reachShare()))
        .arg(s.limit)
        .arg(layer)
        .arg(head)
        .arg(formatNumber(chosen.span, 3), formatNumber(chosen.reach, 3), formatNumber(chosen.meanDistance, 3));
}

void AdaptiveSpanView::drawSpans(const AdaptiveSpans &s, int chosenLayer, int chosenHead)
{
    m_spans = addAxisRect(0, 0);
    QCPAxis *x = m_spans->axis(QCPAxis::atBottom), *y = m_spans->axis(QCPAxis::atLeft);
    const int L = int(s.heads.size()), H = L > 0 ? int(s.heads[0].size()) : 0;
    m_headsPerLayer = H;
    auto *bars = new QCPBars(x, y), *chosen = new QCPBars(x, y);
    auto *used = new QCPGraph(x, y);
    const double floor = 0.5; // a log axis has no 0: a span under half a token has no bar, only its number
    const bool labelled = L * H <= 32;
    const ThemeColors colors = themeColors(m_spec.theme);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    for (int l = 0; l < L; ++l) {
        for (int h = 0; h < H; ++h) {
            const HeadSpan &span = s.heads[size_t(l)][size_t(h)];
            const double at = barPosition(l, h, H);
            // QCPBars draws a bar from its base to base + value.
            (l == chosenLayer && h == chosenHead ? chosen : bars)->addData(at, std::max(span.span, floor) - floor);
            if (labelled) {
                auto *number = new QCPItemText(plot());
                number->setClipAxisRect(m_spans);
                number->position->setAxes(x, y);
                number->position->setAxisRect(m_spans);
                number->position->setCoords(at, std::max(span.span, floor));
                number->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
                number->setText(formatNumber(span.span, 3));
                const bool isChosen = l == chosenLayer && h == chosenHead; // a span of 0 has no bar to colour
                number->setColor(isChosen ? kChosen : colors.text);
                QFont font = number->font();
                font.setBold(isChosen);
                number->setFont(font);
            }
            used->addData(at, std::max(span.meanDistance, floor));
            ticks->addTick(at, QString::number(h));
        }
        ticks->addTick(barPosition(l, H, H) - (H + 1) / 2.0, tr("\n\nlayer %1").arg(l));
    }
    bars->setBrush(seriesColours().at(0));
    chosen->setBrush(kChosen);
    for (QCPBars *b : {bars, chosen}) {
        b->setPen(Qt::NoPen);
        b->setWidth(0.8);
        b->setBaseValue(floor);
    }
    bars->setName(tr("span z (tokens)"));
    chosen->setName(tr("the head on the right"));
    used->setName(tr("mean distance of its weight here"));
    used->setLineStyle(QCPGraph::lsNone);
    used->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(colors.text, 1.5), colors.background, 9));
    addReferenceLine(m_spans, Qt::Horizontal, s.limit, QPen(colors.text, 1.5, Qt::DashLine));
    x->setTicker(ticks);
    x->setRange(-0.8, barPosition(L - 1, H - 1, H) + 0.8);
    x->grid()->setVisible(false);
    x->setLabel(tr("head"));
    y->setScaleType(QCPAxis::stLogarithmic);
    y->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    y->setRange(floor, s.limit * 10.0); // room above the limit for the legend
    y->setLabel(tr("tokens back (log scale); dashed: S = %1").arg(s.limit));
    setPanelTitle(m_spans, tr("Each head's learned span"));
    addPanelLegend(m_spans, {bars, chosen, used});
}

void AdaptiveSpanView::drawHead(const AdaptiveSpans &s, int layer, int head)
{
    QString problem;
    const Tensor *probs = findHeadTensor(m_input, layer, "attn.probs", head, &problem);
    QCPAxisRect *rect = addAxisRect(0, 1);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    setPanelTitle(rect, tr("Layer %1, head %2 under its mask").arg(layer).arg(head));
    if (!probs)
        return;
    const int T = int(probs->dim(1));
    const auto weights = probs->slice(head);
    QCPColorMap *map = addMatrixMap(
        rect, T, T, [&](int i, int j) { return j <= i ? double(weights(i, j)) : std::nan(""); },
        colormap(m_spec.colormap));
    addColorScale(0, 2, map, rect, tr("attention weight"));
    // The mask's edges: keys from i − z on get full weight; from i − z − R back, exactly 0.
    const HeadSpan &span = s.heads[size_t(layer)][size_t(head)];
    const auto edge = [&](double back, Qt::PenStyle style, const QString &name) {
        auto *g = new QCPGraph(x, y);
        for (int i = 0; i < T; ++i)
            if (i - back >= -0.5)
                g->addData(i - back, i);
        g->setPen(QPen(kChosen, 2.5, style));
        g->setName(name);
        return g;
    };
    QCPGraph *full = edge(span.span, Qt::SolidLine, tr("i \u2212 z: full weight from here"));
    QCPGraph *zero = edge(span.reach, Qt::DashLine, tr("i \u2212 z \u2212 R: exactly 0 from here back"));
    x->setLabel(tr("key j"));
    y->setLabel(tr("query i"));
    setIntegerTicks(x);
    setIntegerTicks(y);
    addPanelLegend(rect, {full, zero});
}

void AdaptiveSpanView::chooseHeadAt(QMouseEvent *event)
{
    if (!m_spans || m_headsPerLayer < 1 || !m_spans->rect().contains(event->pos()))
        return;
    const double at = m_spans->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x());
    const int slot = int(std::lround(at)), layer = slot / (m_headsPerLayer + 1), head = slot % (m_headsPerLayer + 1);
    if (slot < 0 || head >= m_headsPerLayer || !m_input.model || layer >= m_input.model->config.layers)
        return;
    m_spec.layer = layer;
    m_spec.head = head;
    emit specEdited(m_spec);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::adaptivespan::makeView(QWidget *parent)
{
    return std::make_unique<AdaptiveSpanView>(parent);
}
