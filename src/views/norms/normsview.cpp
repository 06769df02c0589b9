#include "norms/normsview.h"

#include "views/colormaps.h"
#include "views/heatmapticks.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QMouseEvent>
#include <QToolTip>

#include <algorithm>

namespace atlas {

namespace {

constexpr double kColourLimit = 3; // the maps' colours stop at ±3 standard units; the tooltips give every value

} // namespace

NormsView::NormsView(QWidget *parent)
    : ResultPlotView(parent)
{
    connect(plot(), &QCustomPlot::mouseMove, this, &NormsView::showValueAt);
    plot()->setMouseTracking(true);
    plot()->setToolTip(tr("Left: each token normalised over its features (LayerNorm); middle: each feature normalised "
                          "over the tokens (BatchNorm); right: how much a token's BatchNorm depends on the tokens "
                          "after it. Hover a cell for both values."));
}

QString NormsView::pendingText() const
{
    return tr("Normalising the block's input per token and per feature\u2026");
}

QString NormsView::draw(const NormsAnalysis &result)
{
    const NormComparison &n = result.comparison;
    m_shown = n;
    m_maps.clear();
    setTitle(tr("LayerNorm against BatchNorm \u00B7 %1 \u00B7 layer %2")
                 .arg(m_input.model ? QString::fromStdString(m_input.model->name) : QString())
                 .arg(n.layer));
    const QString tokenNorm = n.rms ? tr("RMSNorm") : tr("LayerNorm");
    m_maps.push_back(addMap(0, n.tokenNormed, tokenNorm));
    m_maps.push_back(addMap(1, n.batchNormed, tr("BatchNorm")));
    drawChange(n);
    labelAxes();

    const auto [tokenLow, tokenHigh] = std::minmax_element(n.tokenScale.begin(), n.tokenScale.end());
    const auto [featureLow, featureHigh] = std::minmax_element(n.featureScale.begin(), n.featureScale.end());
    double later = 0;
    for (int t = 1; t + 1 < n.tokens; ++t)
        later += n.laterTokensChange[size_t(t)];
    const double meanLater = n.tokens > 2 ? later / (n.tokens - 2) : 0.0;
    const QString rowShape = n.rms ? tr("a mean square of 1") : tr("mean 0 and variance 1");
    const QString affine = n.rms ? tr("times the model's \u03B3") : tr("times the model's \u03B3 and plus its \u03B2");
    return tr("Block %1's first norm reads %2 (%3 tokens by %4 features) and writes %5. %6 divides each token by its "
              "own scale, %7 (from %8 to %9 over the tokens): each row on the left has %10, whatever the other "
              "tokens are; %11 it is the trace's %5 to %12. BatchNorm divides each feature by its scale over a "
              "batch, here the input's tokens (from %13 to %14 over the features): each column in the middle has mean "
              "0 and variance 1, so a token's output reads every other token. Right: left out of the statistics, the "
              "tokens after token t move its BatchNorm output by %15 a feature on average (tokens 1 to %16), and "
              "token 0's by %17: BatchNorm over one token gives 0, which is what a model generating one token at a "
              "time would get. %6 moves by exactly 0. A causal model may not read later tokens, and a batch's "
              "statistics change with its size and its padding: transformers normalise each token on its own. "
              "Colours stop at \u00B1%18.")
        .arg(n.layer)
        .arg(QString::fromStdString(n.input))
        .arg(n.tokens)
        .arg(n.width)
        .arg(QString::fromStdString(n.output), tokenNorm,
            n.rms ? tr("\u221A(mean x\u00B2 + \u03B5)") : tr("\u221A(\u03C3\u00B2 + \u03B5)"))
        .arg(formatNumber(*tokenLow, 3), formatNumber(*tokenHigh, 3), rowShape, affine)
        .arg(formatNumber(n.traceDifference, 2), formatNumber(*featureLow, 3), formatNumber(*featureHigh, 3),
            formatNumber(meanLater, 3))
        .arg(n.tokens - 2)
        .arg(formatNumber(n.laterTokensChange.front(), 3))
        .arg(kColourLimit);
}

QCPAxisRect *NormsView::addMap(int column, const NormMatrix &values, const QString &title)
{
    QCPAxisRect *rect = addAxisRect(0, column);
    QCPColorMap *map = addMatrixMap(
        rect, int(values.rows()), int(values.cols()), [&](int r, int c) { return values(r, c); }, divergingColormap(),
        -kColourLimit, kColourLimit);
    if (column == 1)
        addColorScale(0, 2, map, rect, tr("standard units"));
    rect->axis(QCPAxis::atBottom)->setLabel(tr("feature"));
    setPanelTitle(rect, title);
    return rect;
}

void NormsView::drawChange(const NormComparison &n)
{
    QCPAxisRect *rect = addAxisRect(0, 3);
    m_change = rect;
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const QList<QColor> colours = seriesColours();
    auto *batch = new QCPGraph(x, y);
    auto *layer = new QCPGraph(x, y);
    double top = 0;
    for (int t = 0; t < n.tokens; ++t) {
        batch->addData(t, n.laterTokensChange[size_t(t)]);
        layer->addData(t, 0.0);
        top = std::max(top, n.laterTokensChange[size_t(t)]);
    }
    batch->setPen(QPen(colours.at(0), 2.5));
    batch->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, colours.at(0), colours.at(0), 5));
    batch->setName(tr("BatchNorm"));
    layer->setPen(QPen(colours.at(1), 2.5, Qt::DashLine));
    layer->setName(n.rms ? tr("RMSNorm") : tr("LayerNorm"));
    x->setRange(-0.5, n.tokens - 0.5);
    y->setRange(-0.05 * std::max(top, 1e-6), 1.1 * std::max(top, 1e-6));
    y->setLabel(tr("mean |change| a feature"));
    setPanelTitle(rect, tr("Later tokens"));
    addPanelLegend(rect, {batch, layer});
}

void NormsView::labelAxes()
{
    const int tokens = m_shown.tokens;
    const QStringList labels = tokenLabels(m_input, tokens);
    for (const QPointer<QCPAxisRect> &rect : m_maps)
        if (rect) {
            setTokenTicks(rect->axis(QCPAxis::atLeft), labels, tokens, std::max(100, height() / 2), false, true);
            setIntegerTicks(rect->axis(QCPAxis::atBottom), std::max(1, m_shown.width / 4));
        }
    if (m_change)
        setTokenTicks(m_change->axis(QCPAxis::atBottom), labels, tokens, std::max(100, width() / 4), true, true);
}

void NormsView::resizeEvent(QResizeEvent *event)
{
    AnalysisPlotView::resizeEvent(event);
    labelAxes();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void NormsView::showValueAt(QMouseEvent *event)
{
    QString text;
    for (const QPointer<QCPAxisRect> &rect : m_maps) {
        if (!rect || !rect->rect().contains(event->pos()))
            continue;
        const int f = int(std::lround(rect->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
        const int t = int(std::lround(rect->axis(QCPAxis::atLeft)->pixelToCoord(event->pos().y())));
        if (t < 0 || f < 0 || t >= m_shown.tokens || f >= m_shown.width)
            break;
        text = tr("Token %1 '%2', feature %3: %4 %5 (the token's scale %6); BatchNorm %7 (the feature's mean %8, "
                  "scale %9)")
                   .arg(t)
                   .arg(tokenLabel(m_input, t))
                   .arg(f)
                   .arg(m_shown.rms ? tr("RMSNorm") : tr("LayerNorm"))
                   .arg(formatNumber(m_shown.tokenNormed(t, f), 4), formatNumber(m_shown.tokenScale[size_t(t)], 4),
                       formatNumber(m_shown.batchNormed(t, f), 4), formatNumber(m_shown.featureMean[size_t(f)], 4),
                       formatNumber(m_shown.featureScale[size_t(f)], 4));
    }
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, plot());
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::norms::makeView(QWidget *parent)
{
    return std::make_unique<NormsView>(parent);
}
