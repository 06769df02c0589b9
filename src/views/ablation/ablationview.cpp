#include "ablation/ablationview.h"

#include "ablation/ablation.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>

#include <algorithm>
#include <numeric>
#include <utility>

namespace atlas {

namespace {

constexpr int kBars = 8;
const QColor &kOffOutline = palette::alert;

// A cell's loss increase to two decimals, so that the grid reads as one column of figures ("+0.97", "+0", "−0.01").
QString importanceText(double increase)
{
    const double rounded = std::round(increase * 100.0) / 100.0;
    return (rounded >= 0 ? QStringLiteral("+") : QString()) + formatNumber(rounded == 0 ? 0.0 : rounded, 3);
}

// "L0 H2, L1 H3": layer and head named, not the spec's "0.2,1.3", which reads as a number.
QString headsText(const std::vector<HeadRef> &heads)
{
    QStringList names;
    for (const HeadRef &h : heads)
        names << QStringLiteral("L%1 H%2").arg(h.layer).arg(h.head);
    return names.join(QStringLiteral(", "));
}

} // namespace

AblationView::AblationView(QWidget *parent)
    : ResultPlotView(parent)
    , m_mode(new QComboBox(controlRow()))
{
    auto *row = static_cast<QHBoxLayout *>(controlRow()->layout());
    row->addWidget(new QLabel(tr("Switch heads off by"), controlRow()));
    m_mode->addItem(tr("zeroing their output (Michel et al.)"), QStringLiteral("zero"));
    m_mode->addItem(tr("their mean output"), QStringLiteral("mean"));
    m_mode->setToolTip(tr("Zero: the head's context C_h is replaced by 0 in the merge, as head pruning does. Mean: by "
                          "its average over held-out examples of the model's task, which keeps the average signal "
                          "the next layers expect and removes only what the head says about this input."));
    row->addWidget(m_mode);
    row->addStretch(1);
    connect(m_mode, &QComboBox::activated, this, [this] {
        m_spec.set(views::ablation::kAblation, m_mode->currentData().toString().toStdString());
        emit specEdited(m_spec);
    });
    connect(plot(), &QCustomPlot::mousePress, this, &AblationView::toggleHeadAt);
    plot()->setToolTip(tr("Click a head in the table to switch it off or on"));
}

QString AblationView::progressFormat() const
{
    return tr("%v of %m scorings of the task (one per head, and the whole model)");
}

QString AblationView::pendingText() const
{
    return tr("Running the model with and without the heads, and scoring its task…");
}

QString AblationView::draw(const HeadAblationAnalysis &a)
{
    m_mode->setCurrentIndex(m_mode->findData(QString::fromStdString(a.mode)));
    const bool zero = a.mode == "zero";
    setTitle(a.heads.empty() ? tr("Head ablation: no head off")
                             : tr("Heads %1 off (%2)").arg(headsText(a.heads), zero ? tr("zeroed") : tr("mean")));
    drawImportance(a);
    drawNextToken(a);

    QString text;
    if (!a.heads.empty())
        text += zero ? tr("In the merge each of them contributes C_h = 0. ")
                     : tr("In the merge each of them contributes its mean context C_h over %1. ")
                           .arg(a.importance ? tr("64 held-out examples of the task") : tr("this input's positions"));
    const AblationComparison &c = a.comparison;
    if (c.scored)
        text += tr("Held-out %1, %2 examples: loss %3 → %4 nats, token accuracy %5 → %6, exact match %7 → %8. ")
                    .arg(QString::fromStdString(m_input.model->config.task))
                    .arg(HeadAblationAnalysis::kExamples)
                    .arg(formatNumber(c.baseline.loss), formatNumber(c.ablated.loss))
                    .arg(formatPercent(c.baseline.tokenAccuracy), formatPercent(c.ablated.tokenAccuracy),
                        formatPercent(c.baseline.exactMatch), formatPercent(c.ablated.exactMatch));
    if (a.importance) {
        int bestLayer = 0, bestHead = 0;
        for (int l = 0; l < int(a.importance->without.size()); ++l)
            for (int h = 0; h < int(a.importance->without[size_t(l)].size()); ++h)
                if (a.importance->lossIncrease(l, h) > a.importance->lossIncrease(bestLayer, bestHead))
                    bestLayer = l, bestHead = h;
        text += tr("Table: the loss increase (nats) with each head alone off (%1); largest: head %2 of layer %3.")
                    .arg(zero ? tr("zeroed") : tr("mean"))
                    .arg(bestHead)
                    .arg(bestLayer);
    } else {
        text += tr("This model names no task (it was not trained on one of the project's tasks), so there is no "
                   "held-out score or importance table: the bars still compare the next token.");
    }
    return text;
}

void AblationView::drawImportance(const HeadAblationAnalysis &a)
{
    const int L = m_input.model->config.layers, H = m_input.model->config.heads;
    double largest = 1e-6;
    for (int l = 0; l < L && a.importance; ++l)
        for (int h = 0; h < H; ++h)
            largest = std::max(largest, a.importance->lossIncrease(l, h));
    const auto off = [&a](int l, int h) {
        return std::find(a.heads.begin(), a.heads.end(), HeadRef {l, h}) != a.heads.end();
    };
    m_grid = addHeadTable(
        0, 0, L, H, [&a](int l, int h) { return a.importance ? std::max(0.0, a.importance->lossIncrease(l, h)) : 0.0; },
        largest,
        [&](int l, int h) {
            return (a.importance ? importanceText(a.importance->lossIncrease(l, h)) : QString())
                + (off(l, h) ? tr("\noff") : QString());
        });
    for (const HeadRef &h : a.heads)
        outlineHead(m_grid, h.layer, h.head, kOffOutline);
    setPanelTitle(m_grid, a.importance ? tr("Each head alone off: loss increase") : tr("Heads (click one)"));
}

void AblationView::drawNextToken(const HeadAblationAnalysis &a)
{
    const AblationComparison &c = a.comparison;
    std::vector<int> ids(c.before.size());
    std::iota(ids.begin(), ids.end(), 0);
    int count = std::min<int>(kBars, int(ids.size()));
    std::partial_sort(ids.begin(), ids.begin() + count, ids.end(),
        [&](int i, int j) { return std::max(c.before[i], c.after[i]) > std::max(c.before[j], c.after[j]); });
    QCPAxisRect *rect = addAxisRect(0, 1);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    auto label = [&](int id) { return vocabularyLabel(m_input, id); };
    // As many bars as their labels fit upright in the half of the plot this panel gets ("<0x86>" is wide).
    const QFontMetrics metrics(x->tickLabelFont());
    int widest = 0;
    for (int i = 0; i < count; ++i)
        widest = std::max(widest, metrics.horizontalAdvance(label(ids[size_t(i)])));
    while (count > 3 && count * (widest + metrics.height()) > plot()->width() / 2 - 4 * metrics.height())
        --count;
    auto *group = new QCPBarsGroup(plot());
    auto *whole = new QCPBars(x, y), *off = new QCPBars(x, y);
    const QList<QColor> &series = seriesColours();
    whole->setName(tr("whole model"));
    off->setName(a.heads.empty() ? tr("heads off (none)") : tr("heads %1 off").arg(headsText(a.heads)));
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    double largest = 1e-6;
    for (int i = 0; i < count; ++i) {
        const int id = ids[size_t(i)];
        whole->addData(i, c.before[size_t(id)]);
        off->addData(i, c.after[size_t(id)]);
        largest = std::max({largest, double(c.before[size_t(id)]), double(c.after[size_t(id)])});
        ticks->addTick(i, label(id));
    }
    for (auto [bars, color] : {std::pair {whole, series.at(0)}, std::pair {off, kOffOutline}}) {
        bars->setWidth(0.38);
        bars->setBarsGroup(group);
        bars->setPen(Qt::NoPen);
        bars->setBrush(color);
    }
    x->setTicker(ticks);
    x->setRange(-0.6, count - 0.4);
    x->grid()->setVisible(false);
    y->setRange(0, std::min(1.0, largest * 1.15));
    y->setLabel(tr("probability"));
    const QString token = a.position < m_input.tokens.size() ? m_input.tokens.at(a.position) : QString();
    x->setLabel(tr("after '%1' (position %2)").arg(token).arg(a.position));
    setPanelTitle(rect, tr("Next token"));
    addPanelLegend(rect, {whole, off});
}

void AblationView::toggleHeadAt(QMouseEvent *event)
{
    const std::optional<HeadRef> clicked = headAt(m_grid, event->pos());
    if (!clicked)
        return;
    std::vector<HeadRef> heads;
    try {
        heads = parseHeadList(
            m_spec.get(views::ablation::kAblateHeads), m_input.model->config.layers, m_input.model->config.heads, "");
    } catch (const std::exception &) {
        heads.clear(); // a spec naming heads this model lacks: start again from this click
    }
    if (const auto it = std::find(heads.begin(), heads.end(), *clicked); it != heads.end())
        heads.erase(it);
    else
        heads.push_back(*clicked);
    std::sort(heads.begin(), heads.end(),
        [](const HeadRef &p, const HeadRef &q) { return std::pair(p.layer, p.head) < std::pair(q.layer, q.head); });
    m_spec.set(views::ablation::kAblateHeads, headListText(heads));
    emit specEdited(m_spec);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::ablation::makeView(QWidget *parent)
{
    return std::make_unique<AblationView>(parent);
}
