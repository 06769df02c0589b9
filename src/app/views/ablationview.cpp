#include "views/ablationview.h"

#include "view/viewanalysis.h"
#include "views/colormaps.h"
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
const QColor kOffOutline(0xd6, 0x27, 0x28);

// A cell's loss increase to two decimals, so that the grid reads as one column of figures ("+0.97", "+0", "−0.01").
QString importanceText(double increase)
{
    const double rounded = std::round(increase * 100.0) / 100.0;
    return (rounded >= 0 ? QStringLiteral("+") : QString()) + formatNumber(rounded == 0 ? 0.0 : rounded, 3);
}

QString headsText(const std::vector<HeadRef> &heads)
{
    return QString::fromStdString(headListText(heads)).replace(',', QStringLiteral(", "));
}

// A panel's title on its top axis, which shows nothing else.
void setPanelTitle(QCPAxisRect *rect, const QString &text)
{
    QCPAxis *top = rect->axis(QCPAxis::atTop);
    top->setVisible(true);
    top->setTicks(false);
    top->setTickLabels(false);
    top->setBasePen(Qt::NoPen);
    top->setLabel(text);
    const QCPAxis *left = rect->axis(QCPAxis::atLeft);
    top->setLabelColor(left->labelColor());
    QFont bold = left->labelFont();
    bold.setBold(true);
    top->setLabelFont(bold);
}

} // namespace

AblationView::AblationView(QWidget *parent)
    : AnalysisPlotView(parent)
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
        m_spec.ablation = m_mode->currentData().toString().toStdString();
        emit specEdited(m_spec);
    });
    connect(plot(), &QCustomPlot::mousePress, this, &AblationView::toggleHeadAt);
    plot()->setToolTip(tr("Click a head in the table to switch it off or on"));
}

bool AblationView::isCurrent(const ViewAnalysis &result) const
{
    const auto *a = dynamic_cast<const HeadAblationAnalysis *>(&result);
    return a && m_input.model && a->model == m_input.model->name && a->mode == m_spec.ablation;
}

QString AblationView::pendingText() const
{
    return tr("Running the model with and without the heads, and scoring its task…");
}

QString AblationView::draw(const ViewAnalysis &result)
{
    const auto &a = static_cast<const HeadAblationAnalysis &>(result);
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
        text += tr("This model names no task (atlas_task in its config.json), so there is no held-out score or "
                   "importance table: the bars still compare the next token.");
    }
    return text;
}

void AblationView::drawImportance(const HeadAblationAnalysis &a)
{
    const int L = m_input.model->config.layers, H = m_input.model->config.heads;
    const std::vector<HeadRef> &switchedOff = a.heads;
    m_grid = addAxisRect(0, 0);
    QCPAxis *x = m_grid->axis(QCPAxis::atBottom), *y = m_grid->axis(QCPAxis::atLeft);
    auto *map = new QCPColorMap(x, y);
    map->data()->setSize(H, L);
    map->data()->setRange(QCPRange(0, H - 1), QCPRange(0, L - 1));
    double largest = 1e-6;
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            const double v = a.importance ? std::max(0.0, a.importance->lossIncrease(l, h)) : 0.0;
            largest = std::max(largest, v);
            map->data()->setCell(h, l, v);
        }
    map->setGradient(colormap(m_spec.colormap));
    map->setDataRange(QCPRange(0, largest));
    map->setInterpolate(false);
    const QFont cellFont = sizedFont(font(), L * H > 48 ? 7 : 9);
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            const bool off = std::find(switchedOff.begin(), switchedOff.end(), HeadRef {l, h}) != switchedOff.end();
            const double v = a.importance ? a.importance->lossIncrease(l, h) : 0.0;
            auto *label = new QCPItemText(plot());
            label->setClipAxisRect(m_grid);
            label->position->setAxes(x, y);
            label->position->setCoords(h, l);
            label->setFont(cellFont);
            label->setText((a.importance ? importanceText(v) : QString()) + (off ? tr("\noff") : QString()));
            label->setColor(std::max(0.0, v) > 0.6 * largest ? Qt::black : Qt::white);
            if (!off)
                continue;
            auto *outline = new QCPItemRect(plot());
            outline->setClipAxisRect(m_grid);
            outline->topLeft->setAxes(x, y);
            outline->bottomRight->setAxes(x, y);
            outline->topLeft->setCoords(h - 0.46, l - 0.46);
            outline->bottomRight->setCoords(h + 0.46, l + 0.46);
            outline->setPen(QPen(kOffOutline, 3));
        }
    auto headTicks = QSharedPointer<QCPAxisTickerText>::create(),
         layerTicks = QSharedPointer<QCPAxisTickerText>::create();
    for (int h = 0; h < H; ++h)
        headTicks->addTick(h, QString::number(h));
    for (int l = 0; l < L; ++l)
        layerTicks->addTick(l, QString::number(l));
    x->setTicker(headTicks);
    y->setTicker(layerTicks);
    x->setRange(-0.5, H - 0.5);
    y->setRange(-0.5, L - 0.5);
    y->setRangeReversed(true);
    x->setLabel(tr("head"));
    y->setLabel(tr("layer"));
    x->grid()->setVisible(false);
    y->grid()->setVisible(false);
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
    auto *legend = new QCPLegend; // inside the panel: the view has no row to spare at projector sizes
    rect->insetLayout()->addElement(legend, Qt::AlignTop | Qt::AlignRight);
    legend->setLayer(QStringLiteral("legend"));
    const ThemeColors colors = themeColors(m_spec.theme);
    legend->setBrush(colors.background);
    legend->setBorderPen(QPen(colors.frame));
    legend->setTextColor(colors.text);
    legend->setFont(sizedFont(font(), 9));
    whole->addToLegend(legend);
    off->addToLegend(legend);
}

void AblationView::toggleHeadAt(QMouseEvent *event)
{
    if (!m_grid || !m_input.model || !m_grid->rect().contains(event->pos()))
        return;
    const int head = int(std::lround(m_grid->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
    const int layer = int(std::lround(m_grid->axis(QCPAxis::atLeft)->pixelToCoord(event->pos().y())));
    if (head < 0 || head >= m_input.model->config.heads || layer < 0 || layer >= m_input.model->config.layers)
        return;
    std::vector<HeadRef> heads;
    try {
        heads = parseHeadList(m_spec.ablateHeads, m_input.model->config.layers, m_input.model->config.heads, "");
    } catch (const std::exception &) {
        heads.clear(); // a spec naming heads this model lacks: start again from this click
    }
    const HeadRef clicked {layer, head};
    if (const auto it = std::find(heads.begin(), heads.end(), clicked); it != heads.end())
        heads.erase(it);
    else
        heads.push_back(clicked);
    std::sort(heads.begin(), heads.end(),
        [](const HeadRef &p, const HeadRef &q) { return std::pair(p.layer, p.head) < std::pair(q.layer, q.head); });
    m_spec.ablateHeads = headListText(heads);
    emit specEdited(m_spec);
}

} // namespace atlas
