#include "sinkhorn/sinkhornview.h"

#include "sinkhorn/sinkhorn.h"
#include "views/colormaps.h"
#include "views/heatmapticks.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <algorithm>

namespace atlas {

namespace {

// An outline of the cells [x0, x1) × [y0, y1) of a heat map.
void outline(QCustomPlot *plot, QCPAxisRect *rect, double x0, double y0, double x1, double y1, const QPen &pen)
{
    auto *box = new QCPItemRect(plot);
    box->setClipAxisRect(rect);
    box->topLeft->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    box->bottomRight->setAxes(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    box->topLeft->setCoords(x0 - 0.5, y0 - 0.5);
    box->bottomRight->setCoords(x1 - 0.5, y1 - 0.5);
    box->setPen(pen);
    box->setBrush(Qt::NoBrush);
}

} // namespace

SinkhornView::SinkhornView(QWidget *parent)
    : ResultPlotView(parent)
{
    plot()->setToolTip(tr("Left: the layer's sort matrix S (query blocks down, the blocks their sorted half reads "
                          "across); right: the chosen head's weight of each value, each block's own block and its "
                          "sorted block outlined"));
}

QString SinkhornView::pendingText() const
{
    return tr("Sorting the blocks, and scoring held-out text\u2026");
}

QString SinkhornView::draw(const SinkhornAnalysis &a)
{
    const SinkhornPicture &s = a.picture;
    m_tokens = int(s.tokens.size());
    setTitle(tr("Sparse Sinkhorn attention \u00B7 %1 \u00B7 %2 blocks of %3 tokens")
                 .arg(m_input.model ? QString::fromStdString(m_input.model->name) : QString())
                 .arg(s.blocks)
                 .arg(s.block));
    drawSort(s);
    drawAttention(s);
    QString text
        = tr("A sorting network reads each block's summed input and scores where it belongs, R = "
             "ReLU(P W_fc + b_fc) W_proj + b_proj; Sinkhorn's normalisation makes R / \u03C4 a soft "
             "permutation S. Each query attends, in one softmax, to its own block's keys and to the sorted "
             "block \u03A3_J S_IJ K_J: %1 keys of %2, %3 of the pairs. Layer %4's S gives each block's "
             "sorted half on average %5 of its weight from one block (100 % would be a permutation, %6 a plain "
             "average); head "
             "%7 puts %8 of its weight there. ")
              .arg(2 * s.block)
              .arg(m_tokens)
              .arg(formatPercent(s.pairs))
              .arg(s.layer)
              .arg(formatPercent(s.sharpness))
              .arg(formatPercent(1.0 / std::max(1, s.blocks)))
              .arg(s.head)
              .arg(formatPercent(s.sortedShare));
    for (const HeldOutScore &score : a.scores)
        text += tr("%1 names %2 of the held-out chosen tokens. ")
                    .arg(QString::fromStdString(score.model), formatPercent(score.evaluation.tokenAccuracy));
    if (!a.sortOff.model.empty())
        text += tr("With the sort switched off (S = I: each block reads only itself) %1 names %2. ")
                    .arg(QString::fromStdString(a.sortOff.model), formatPercent(a.sortOff.evaluation.tokenAccuracy));
    if (!a.scores.empty())
        text += tr("%1 held-out windows each. ").arg(SinkhornAnalysis::kExamples);
    text += tr("The app scores every pair and mixes the scores with S, which gives the same numbers as sorting the "
               "keys first.");
    return text;
}

void SinkhornView::drawSort(const SinkhornPicture &s)
{
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPColorMap *map = addMatrixMap(
        rect, s.blocks, s.blocks, [&](int r, int c) { return s.sort[size_t(r) * size_t(s.blocks) + size_t(c)]; },
        colormap(m_spec.colormap), 0, 1);
    map->setName(tr("sort matrix"));
    map->setGradient(colormap(m_spec.colormap));
    const ThemeColors colours = themeColors(m_spec.theme);
    for (int I = 0; I < s.blocks; ++I) {
        const int J = s.sortedTo[size_t(I)];
        outline(plot(), rect, J, I, J + 1, I + 1, QPen(colours.accent, 2));
    }
    const QStringList labels = tokenLabels(m_input, m_tokens);
    m_blockLabels.clear();
    for (int I = 0; I < s.blocks; ++I) {
        QString text;
        for (int t = I * s.block; t < std::min((I + 1) * s.block, m_tokens); ++t)
            text += labels.value(t);
        m_blockLabels << QString::number(I) + QStringLiteral(" ") + text;
    }
    setPanelTitle(rect, tr("Layer %1: S, the blocks each block reads").arg(s.layer));
    m_sort = rect;
}

void SinkhornView::drawAttention(const SinkhornPicture &s)
{
    QCPAxisRect *rect = addAxisRect(0, 1);
    QCPColorMap *map = addMatrixMap(
        rect, m_tokens, m_tokens, [&](int r, int c) { return s.attention[size_t(r) * size_t(m_tokens) + size_t(c)]; },
        colormap(m_spec.colormap), 0, 1);
    map->setName(tr("attention"));
    map->setGradient(colormap(m_spec.colormap));
    const ThemeColors colours = themeColors(m_spec.theme);
    const int b = s.block;
    for (int I = 0; I < s.blocks; ++I) {
        const int top = I * b, bottom = std::min(top + b, m_tokens), J = s.sortedTo[size_t(I)];
        outline(plot(), rect, top, top, bottom, bottom, QPen(colours.frame, 1));
        if (J != I)
            outline(plot(), rect, J * b, top, std::min(J * b + b, m_tokens), bottom, QPen(colours.accent, 2));
    }
    m_attention = rect;
    labelAxes();
    addColorScale(0, 2, map, rect, tr("weight"));
    if (auto *grid = qobject_cast<QCPLayoutGrid *>(rect->layout())) { // the sort small, the tokens' map large
        grid->setColumnStretchFactor(0, 1.0);
        grid->setColumnStretchFactor(1, 1.5);
    }
    setPanelTitle(rect, tr("Head %1: weights (own block framed, sorted block in colour)").arg(s.head));
}

void SinkhornView::labelAxes()
{
    const QStringList labels = tokenLabels(m_input, m_tokens);
    if (m_sort) {
        setTokenTicks(m_sort->axis(QCPAxis::atLeft), m_blockLabels, int(m_blockLabels.size()),
            std::max(100, height() / 2), false, false);
        QStringList numbers;
        for (int I = 0; I < int(m_blockLabels.size()); ++I)
            numbers << QString::number(I);
        setTokenTicks(
            m_sort->axis(QCPAxis::atBottom), numbers, int(numbers.size()), std::max(100, width() / 4), true, false);
    }
    if (m_attention) {
        setTokenTicks(m_attention->axis(QCPAxis::atBottom), labels, m_tokens, std::max(200, width() / 2), true, false);
        setTokenTicks(m_attention->axis(QCPAxis::atLeft), labels, m_tokens, std::max(100, height() / 2), false, false);
    }
}

void SinkhornView::resizeEvent(QResizeEvent *event)
{
    AnalysisPlotView::resizeEvent(event);
    labelAxes();
    plot()->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::sinkhorn::makeView(QWidget *parent)
{
    return std::make_unique<SinkhornView>(parent);
}
