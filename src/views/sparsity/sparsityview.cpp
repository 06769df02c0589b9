#include "sparsity/sparsityview.h"

#include "sparsity/sparsity.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <QMouseEvent>

#include <algorithm>

namespace atlas {

namespace {

const QColor &kChosenOutline = palette::alert;

QString normaliserText(Normaliser n)
{
    switch (n) {
    case Normaliser::Softmax:
        return QObject::tr("softmax (\u03B1 = 1)");
    case Normaliser::Sparsemax:
        return QObject::tr("sparsemax (\u03B1 = 2)");
    case Normaliser::Entmax15:
        return QObject::tr("1.5-entmax");
    case Normaliser::LearnedEntmax:
        return QObject::tr("\u03B1-entmax, \u03B1 learned per head");
    }
    return {};
}

} // namespace

SparsityView::SparsityView(QWidget *parent)
    : ResultPlotView(parent)
{
    connect(plot(), &QCustomPlot::mousePress, this, &SparsityView::chooseHeadAt);
    plot()->setToolTip(tr("Click a head in the table to see its keys per query"));
}

QString SparsityView::pendingText() const
{
    return tr("Counting every head's zeros…");
}

QString SparsityView::draw(const SparseAttentionAnalysis &result)
{
    const AttentionSparsity &s = result.sparsity;
    const int layer = std::clamp(m_spec.layer, 0, int(s.heads.size()) - 1);
    const int head = std::clamp(m_spec.head, 0, int(s.heads[size_t(layer)].size()) - 1);
    setTitle(tr("Sparse attention \u00B7 %1").arg(normaliserText(s.normaliser)));
    drawGrid(s, layer, head);
    drawSupport(s, layer, head);

    const HeadSparsity &chosen = s.heads[size_t(layer)][size_t(head)];
    QString text = tr("Over every head, %1 of the %2 query\u2013key pairs the mask allows get exactly 0. ")
                       .arg(formatPercent(s.zeroShare()))
                       .arg(s.allowed);
    if (s.normaliser == Normaliser::Softmax)
        text += tr("Softmax gives every allowed key some weight (e^s > 0); a zero here is an exponential too small "
                   "for a float. Sparsemax (\u03B1 = 2) and 1.5-entmax cut off every key whose score falls below a "
                   "threshold \u03C4: open reverse-entmax to see it. ");
    else
        text += tr("p = [(\u03B1 \u2212 1) s \u2212 \u03C4]\u208A^(1/(\u03B1 \u2212 1)): every key whose score falls "
                   "below the threshold \u03C4 gets exactly 0, and the rest still sum to 1. \u03B1 \u2192 1 is "
                   "softmax, \u03B1 = 2 sparsemax. ");
    text += tr("Layer %1, head %2: \u03B1 = %3, %4 zero, %5 keys per query on average.")
                .arg(layer)
                .arg(head)
                .arg(formatNumber(chosen.alpha, 3), formatPercent(chosen.zeroShare()),
                    formatNumber(chosen.meanSupport(), 3));
    return text;
}

void SparsityView::drawGrid(const AttentionSparsity &s, int chosenLayer, int chosenHead)
{
    const int L = int(s.heads.size()), H = L > 0 ? int(s.heads[0].size()) : 0;
    const auto head = [&s](int l, int h) -> const HeadSparsity & { return s.heads[size_t(l)][size_t(h)]; };
    m_grid = addHeadTable(
        0, 0, L, H, [&](int l, int h) { return head(l, h).zeroShare(); }, 1.0,
        [&](int l, int h) {
            return tr("\u03B1 %1\n%2 zero")
                .arg(formatNumber(head(l, h).alpha, 3), formatPercent(head(l, h).zeroShare()));
        });
    outlineHead(m_grid, chosenLayer, chosenHead, kChosenOutline);
    setPanelTitle(m_grid, tr("Each head's \u03B1 and exact zeros"));
}

void SparsityView::drawSupport(const AttentionSparsity &s, int layer, int head)
{
    const HeadSparsity &chosen = s.heads[size_t(layer)][size_t(head)];
    QCPAxisRect *rect = addAxisRect(0, 1);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    auto *allowed = new QCPBars(x, y), *support = new QCPBars(x, y);
    const ThemeColors colors = themeColors(m_spec.theme);
    allowed->setName(tr("keys the mask allows"));
    support->setName(tr("keys given more than 0"));
    int most = 1;
    for (int i = 0; i < int(chosen.allowed.size()); ++i) {
        allowed->addData(i, chosen.allowed[size_t(i)]);
        support->addData(i, chosen.support[size_t(i)]);
        most = std::max(most, chosen.allowed[size_t(i)]);
    }
    const int T = int(chosen.allowed.size());
    for (QCPBars *bars : {allowed, support}) {
        bars->setWidth(T > 64 ? 1.0 : 0.8);
        bars->setPen(Qt::NoPen);
        bars->setAntialiased(T < kAntialiasedMarksBelow);
    }
    allowed->setBrush(colors.frame);
    support->setBrush(seriesColours().at(0));
    if (T <= 24) {
        auto ticks = QSharedPointer<QCPAxisTickerText>::create();
        const QStringList labels = tokenLabels(m_input, T);
        for (int i = 0; i < T; ++i)
            ticks->addTick(i, labels.value(i));
        x->setTicker(ticks);
        x->setLabel(tr("query"));
    } else {
        x->setLabel(tr("query position"));
    }
    x->setRange(-0.6, T - 0.4);
    x->grid()->setVisible(false);
    y->setRange(0, most * 1.08);
    setIntegerTicks(y, std::max(1, most / 6));
    y->setLabel(tr("keys"));
    setPanelTitle(rect, tr("Layer %1, head %2: keys per query").arg(layer).arg(head));
    addPanelLegend(rect, {allowed, support});
}

void SparsityView::chooseHeadAt(QMouseEvent *event)
{
    const std::optional<HeadRef> clicked = headAt(m_grid, event->pos());
    if (!clicked)
        return;
    m_spec.layer = clicked->layer;
    m_spec.head = clicked->head;
    emit specEdited(m_spec);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::sparsity::makeView(QWidget *parent)
{
    return std::make_unique<SparsityView>(parent);
}
