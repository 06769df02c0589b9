#include "funnel/funnelview.h"

#include "funnel/funnel.h"
#include "views/colormaps.h"
#include "views/heatmapticks.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <algorithm>

namespace atlas {

namespace {

QString layerRole(const FunnelPicture &f, int l)
{
    const int stride = f.strides[size_t(l)], keyStride = f.keyStrides[size_t(l)];
    const bool decoder = l > 0 && stride < f.strides[size_t(l - 1)];
    if (decoder)
        return QObject::tr("upsampled");
    if (keyStride < stride)
        return QObject::tr("pooled; keys %1").arg((int(f.tokens.size()) + keyStride - 1) / keyStride);
    return {};
}

// The text of the input tokens a token at `position` covers at `stride`: "th" for two characters.
QString coveredText(const QStringList &labels, int position, int stride)
{
    QString text;
    for (int t = position; t < std::min(position + stride, int(labels.size())); ++t)
        text += labels.value(t);
    return text;
}

} // namespace

FunnelView::FunnelView(QWidget *parent)
    : ResultPlotView(parent)
{
    plot()->setToolTip(tr("Top: the tokens each layer still has, each as wide as the input it pools; bottom: the "
                          "chosen layer and head's attention at that layer's resolution"));
}

QString FunnelView::pendingText() const
{
    return tr("Running the funnel, and scoring held-out text\u2026");
}

QString FunnelView::draw(const FunnelAnalysis &a)
{
    const FunnelPicture &f = a.picture;
    m_tokens = int(f.tokens.size());
    const int L = int(f.strides.size());
    QString lengths;
    for (int l = 0; l < L; ++l)
        lengths += (l ? QStringLiteral(" \u2192 ") : QString()) + QString::number(f.presentAt(l));
    setTitle(tr("Funnel-Transformer \u00B7 %1 \u00B7 tokens per layer: %2")
                 .arg(m_input.model ? QString::fromStdString(m_input.model->name) : QString(), lengths));
    drawFunnel(f);
    drawAttention(f);
    QString text = tr("Between groups of layers each token is pooled with the one beside it, P = (x\u209C + "
                      "x\u209C\u208A\u209B) / 2, so later layers run on half as many; the first layer of a group "
                      "asks with the pooled tokens and attends to the unpooled ones. The decoder repeats each "
                      "compressed token over the positions it covers and adds the stream after the first group. "
                      "This input: %1 of the work of the same layers at full length. ")
                       .arg(formatPercent(f.work));
    for (const HeldOutScore &s : a.scores)
        text += tr("%1 names %2 of the held-out chosen tokens with %3 of the work. ")
                    .arg(QString::fromStdString(s.model), formatPercent(s.evaluation.tokenAccuracy),
                        formatPercent(s.work));
    if (!a.scores.empty())
        text += tr("%1 held-out windows each. The app masks the pooled-away positions rather than removing them, "
                   "so it computes as much.")
                    .arg(FunnelAnalysis::kExamples);
    return text;
}

void FunnelView::drawFunnel(const FunnelPicture &f)
{
    const int L = int(f.strides.size());
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const ThemeColors colours = themeColors(m_spec.theme);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    for (int l = 0; l < L; ++l) {
        const int stride = f.strides[size_t(l)];
        const bool chosen = l == f.layer;
        QColor fill = chosen ? colours.accent : colours.muted;
        fill.setAlpha(chosen ? 170 : 90);
        for (int t = 0; t < m_tokens; t += stride) {
            auto *box = new QCPItemRect(plot());
            box->setClipAxisRect(rect);
            box->topLeft->setAxes(x, y);
            box->bottomRight->setAxes(x, y);
            box->topLeft->setCoords(t - 0.42, l - 0.38);
            box->bottomRight->setCoords(std::min(t + stride, m_tokens) - 0.58, l + 0.38);
            box->setBrush(fill);
            box->setPen(QPen(chosen ? colours.accent : colours.frame, chosen ? 2 : 1));
        }
        const QString role = layerRole(f, l);
        ticks->addTick(l,
            role.isEmpty() ? tr("layer %1: %2").arg(l).arg(f.presentAt(l))
                           : tr("layer %1: %2 (%3)").arg(l).arg(f.presentAt(l)).arg(role));
    }
    x->setRange(-0.5, m_tokens - 0.5);
    y->setRange(-0.5, L - 0.5);
    y->setRangeReversed(true); // layer 0 on top
    y->setTicker(ticks);
    x->grid()->setVisible(false);
    y->grid()->setVisible(false);
    setPanelTitle(rect, tr("The tokens each layer has: a box per token, as wide as the input it pools"));
    m_funnel = rect;
}

void FunnelView::drawAttention(const FunnelPicture &f)
{
    const int rows = int(f.queries.size()), cols = int(f.keys.size());
    QCPAxisRect *rect = addAxisRect(1, 0);
    QCPColorMap *map = addMatrixMap(
        rect, rows, cols, [&](int r, int c) { return f.attention[size_t(r) * size_t(cols) + size_t(c)]; },
        colormap(m_spec.colormap), 0, 1);
    const int stride = f.strides[size_t(f.layer)], keyStride = f.keyStrides[size_t(f.layer)];
    m_queryLabels.clear();
    m_keyLabels.clear();
    const QStringList labels = tokenLabels(m_input, m_tokens);
    for (int q : f.queries)
        m_queryLabels << coveredText(labels, q, stride);
    for (int k : f.keys)
        m_keyLabels << coveredText(labels, k, keyStride);
    m_attention = rect;
    labelAxes();
    addColorScale(1, 1, map, rect, tr("attention weight"));
    const QString shape = stride == 1 ? tr("%1 queries \u00D7 %2 keys, every token").arg(rows).arg(cols)
        : keyStride < stride
        ? tr("%1 pooled queries \u00D7 %2 unpooled keys, each labelled with the text it covers").arg(rows).arg(cols)
        : tr("%1 queries \u00D7 %2 keys, each labelled with the text it covers").arg(rows).arg(cols);
    setPanelTitle(rect, tr("Layer %1, head %2: %3").arg(f.layer).arg(f.head).arg(shape));
}

void FunnelView::labelAxes()
{
    if (m_funnel)
        setTokenTicks(m_funnel->axis(QCPAxis::atBottom), tokenLabels(m_input, m_tokens), m_tokens,
            std::max(200, width() - 260), true, false);
    if (m_attention) {
        setTokenTicks(m_attention->axis(QCPAxis::atBottom), m_keyLabels, int(m_keyLabels.size()),
            std::max(200, width() - 260), true, false);
        setTokenTicks(m_attention->axis(QCPAxis::atLeft), m_queryLabels, int(m_queryLabels.size()),
            std::max(100, height() / 3), false, false);
    }
}

void FunnelView::resizeEvent(QResizeEvent *event)
{
    AnalysisPlotView::resizeEvent(event);
    labelAxes();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::funnel::makeView(QWidget *parent)
{
    return std::make_unique<FunnelView>(parent);
}
