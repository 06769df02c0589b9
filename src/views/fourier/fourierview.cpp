#include "fourier/fourierview.h"

#include "views/colormaps.h"
#include "views/heatmapticks.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QMouseEvent>
#include <QToolTip>

#include <algorithm>

namespace atlas {

FourierView::FourierView(QWidget *parent)
    : ResultPlotView(parent)
{
    connect(plot(), &QCustomPlot::mouseMove, this, &FourierView::showValueAt);
    plot()->setMouseTracking(true);
    plot()->setToolTip(tr("Left: FNet's fixed weights cos 2\u03C0ij/T; middle: the share of each output row each "
                          "token writes on this input; right: the chosen head's learned attention (none in an FNet "
                          "model's block). Hover a cell for its numbers."));
}

QString FourierView::pendingText() const
{
    return tr("Mixing the block's input with two Fourier transforms\u2026");
}

QString FourierView::draw(const FourierMixingAnalysis &result)
{
    const FourierMixing &m = result.mixing;
    m_shown = m;
    m_maps.clear();
    const QString model = m_input.model ? QString::fromStdString(m_input.model->name) : QString();
    const QString n = m.length == m.tokens ? tr("T") : QString::number(m.length);
    const double top = std::max(m.share.maxCoeff(), 1e-6f);
    m_maps.push_back(addMap(0, m.cosine, -1, 1, tr("FNet: cos 2\u03C0ij/%1").arg(n), tr("weight"), true));
    m_maps.push_back(addMap(2, m.share, 0, top, tr("FNet: shares here"), tr("share"), false));
    if (m.fnetBlock) {
        setTitle(tr("An FNet block's Fourier mixing \u00B7 %1 \u00B7 layer %2").arg(model).arg(m.layer));
        labelAxes();
        return tr("Layer %1 of %2 is an FNet block (Lee-Thorp et al. 2021): where other models attend, it computes "
                  "Y = Re(F_N X F_d), a discrete Fourier transform over each token's d = %3 hidden units, then over "
                  "N = %4 positions, keeping the real part, with no weights. N is the context the model was trained "
                  "at: this input's %5 tokens are padded with %6 zero rows, so that they are mixed as the training "
                  "windows were. X is %7. Left: the weights it mixes positions with, cos 2\u03C0ij/N, the same for "
                  "every input. Middle: row i of Y is a sum over the tokens j; the size of each term, as a share of "
                  "the row, on this input: a row's largest share is %8 on average, and %9 of a row comes from later "
                  "tokens. What the model learned sits in its feed-forward layers and embeddings, which must make "
                  "every token's vector say what it needs under this fixed mixing. By FFT the mixing costs about "
                  "%10 multiply\u2013adds against %11 for attention's projections, scores and weighted sum.")
            .arg(m.layer)
            .arg(model)
            .arg(m.width)
            .arg(m.length)
            .arg(m.tokens)
            .arg(m.length - m.tokens)
            .arg(QString::fromStdString(m.input))
            .arg(formatPercent(m.largestShare), formatPercent(m.laterShare), formatNumber(m.fourierWork, 3),
                formatNumber(m.attentionWork, 3));
    }
    setTitle(tr("FNet's Fourier mixing against attention \u00B7 %1 \u00B7 layer %2").arg(model).arg(m.layer));
    m_maps.push_back(addMap(4, m.attention, 0, 1, tr("Head %1 (learned)").arg(m.head), tr("weight"), false));
    labelAxes();

    const double ratio = m.attentionWork / std::max(1.0, m.fourierWork);
    return tr("FNet (Lee-Thorp et al. 2021) replaces this sub-layer with Y = Re(F_T X F_d): a discrete Fourier "
              "transform over each token's d = %1 hidden units, then over the T = %2 positions, keeping the real "
              "part. It has no weights. X here is layer %3's attention input (%4). Left: the weights it mixes "
              "positions with, the real part of F_T (its imaginary part, the sines, mixes the imaginary half of each "
              "token's transform); they depend on T only, and row 0 adds every token up. Middle: row i of Y is a sum "
              "over the tokens j; the size of each term, as a share of the row, on this input. A row's largest share "
              "is %5 on average, and %6 of a row comes from later tokens: FNet fits an encoder, not a causal model. "
              "Right: head %7 of the same layer, learned and dependent on the input; its largest weight is %8 on "
              "average. By FFT the mixing costs about %9 multiply\u2013adds against %10 for attention's projections, "
              "scores and weighted sum (%11\u00D7). Lee-Thorp et al. report 92\u201397 % of BERT's GLUE accuracy, "
              "training 80 % faster on GPUs at 512 tokens.")
        .arg(m.width)
        .arg(m.tokens)
        .arg(m.layer)
        .arg(QString::fromStdString(m.input))
        .arg(formatPercent(m.largestShare), formatPercent(m.laterShare))
        .arg(m.head)
        .arg(formatPercent(m.largestWeight), formatNumber(m.fourierWork, 3), formatNumber(m.attentionWork, 3),
            formatNumber(ratio, 2));
}

QCPAxisRect *FourierView::addMap(int column, const FourierMatrix &values, double low, double high, const QString &title,
    const QString &scale, bool diverging)
{
    QCPAxisRect *rect = addAxisRect(0, column);
    QCPColorMap *map = addMatrixMap(
        rect, int(values.rows()), int(values.cols()), [&](int r, int c) { return values(r, c); },
        diverging ? divergingColormap() : colormap(m_spec.colormap), low, high);
    addColorScale(0, column + 1, map, rect, scale);
    setPanelTitle(rect, title);
    return rect;
}

void FourierView::labelAxes()
{
    const int tokens = m_shown.tokens;
    const QStringList labels = tokenLabels(m_input, tokens);
    for (const QPointer<QCPAxisRect> &rect : m_maps)
        if (rect) {
            setTokenTicks(rect->axis(QCPAxis::atBottom), labels, tokens, std::max(100, width() / 4), true, true);
            setTokenTicks(rect->axis(QCPAxis::atLeft), labels, tokens, std::max(100, height() / 2), false, true);
        }
}

void FourierView::resizeEvent(QResizeEvent *event)
{
    AnalysisPlotView::resizeEvent(event);
    labelAxes();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

void FourierView::showValueAt(QMouseEvent *event)
{
    QString text;
    for (const QPointer<QCPAxisRect> &rect : m_maps) {
        if (!rect || !rect->rect().contains(event->pos()))
            continue;
        const int j = int(std::lround(rect->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
        const int i = int(std::lround(rect->axis(QCPAxis::atLeft)->pixelToCoord(event->pos().y())));
        if (i < 0 || j < 0 || i >= m_shown.tokens || j >= m_shown.tokens)
            break;
        text = tr("Row %1 '%2', token %3 '%4': FNet's weight cos 2\u03C0\u00B7%1\u00B7%3/%5 = %6; its share of row %1 "
                  "on this input %7")
                   .arg(i)
                   .arg(tokenLabel(m_input, i))
                   .arg(j)
                   .arg(tokenLabel(m_input, j))
                   .arg(m_shown.length)
                   .arg(formatNumber(m_shown.cosine(i, j), 4), formatPercent(m_shown.share(i, j)));
        if (!m_shown.fnetBlock)
            text += tr("; head %1's attention %2").arg(m_shown.head).arg(formatPercent(m_shown.attention(i, j)));
    }
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, plot());
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::fourier::makeView(QWidget *parent)
{
    return std::make_unique<FourierView>(parent);
}
