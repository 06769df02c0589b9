#include "qknorm/qknormview.h"

#include "qknorm/qknorm.h"
#include "views/palette.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QMouseEvent>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

const QColor &kQuery = palette::tableauBlue, &kKey = palette::tableauOrange;

float largest(const std::vector<float> &values)
{
    return values.empty() ? 0.0f : *std::max_element(values.begin(), values.end());
}

float smallest(const std::vector<float> &values)
{
    return values.empty() ? 0.0f : *std::min_element(values.begin(), values.end());
}

QString lengthRange(const std::vector<float> &values)
{
    return QStringLiteral("%1\u2013%2").arg(formatNumber(smallest(values), 3), formatNumber(largest(values), 3));
}

} // namespace

QkNormView::QkNormView(QWidget *parent)
    : ResultPlotView(parent)
{
    connect(plot(), &QCustomPlot::mousePress, this, &QkNormView::chooseHeadAt);
    plot()->setToolTip(tr("Click a head's range on the right to see its queries and keys on the left"));
}

QString QkNormView::pendingText() const
{
    return tr("Measuring every head's queries, keys and scores\u2026");
}

QString QkNormView::draw(const QkNormAnalysis &result)
{
    const QkNormEffect &e = result.effect;
    const int head = std::clamp(m_spec.head, 0, int(e.heads.size()) - 1);
    const QkNormHead &h = e.heads[size_t(head)];
    const QString model = m_input.model ? QString::fromStdString(m_input.model->name) : QString();
    const QString kind = e.kind == QkNorm::Heads ? tr("QK-norm per head")
        : e.kind == QkNorm::Projections          ? tr("QK-norm over all heads")
                                                 : tr("No QK-norm");
    setTitle(tr("%1 \u00B7 %2 \u00B7 layer %3").arg(kind, model).arg(e.layer));
    drawLengths(e, head);
    drawScores(e, head);

    const QString scale = e.scale == 1.0f ? QString() : tr(" \u00D7 1/\u221A%1").arg(e.dim);
    QString text;
    if (e.kind == QkNorm::None)
        text = tr("This model has no QK-norm: a score is q\u00B7k%1 of the projections as they are, so its size "
                  "follows \u2016q\u2016\u2016k\u2016, which W_q and W_k set (the norm before attention fixes only "
                  "the input's scale). Nothing stops training from growing them, and the scores with them, until "
                  "softmax gives one key all the weight (attention-logit growth, Dehghani et al. 2023). Head %2: "
                  "\u2016q\u2016 %3, \u2016k\u2016 %4; its scores span %5 to %6 against \u00B1%7 that these "
                  "lengths allow (+; |q\u00B7k| \u2264 \u2016q\u2016\u2016k\u2016). Compare with a model that has "
                  "QK-norm (reverse-qwen3).")
                   .arg(scale)
                   .arg(head)
                   .arg(lengthRange(h.queryAfter), lengthRange(h.keyAfter), formatNumber(h.lowest, 3),
                       formatNumber(h.highest, 3), formatNumber(h.inputBound, 3));
    else
        text
            = tr("QK-norm divides each query and key by its root mean square before the scores (%1), then "
                 "multiplies by the learned %14: whatever W_q, W_k and the input, a query is at most "
                 "%2 long and a key %3 (\u221An \u00B7 max|%14|, dotted). Head %4: \u2016q\u2016 %5 before the norm "
                 "(dashed), %6 after (solid; RoPE turns q and k without changing their length); \u2016k\u2016 %7 "
                 "before, %8 after. Its scores span %9 to %10; this input's lengths allow "
                 "\u00B1%11 (+) and the weights alone \u00B1%12 (\u00D7), so no input can make one key weigh more than "
                 "e^%13 times another in this head.")
                  .arg(e.kind == QkNorm::Heads ? tr("per head") : tr("over all heads at once"))
                  .arg(formatNumber(h.queryLimit, 3), formatNumber(h.keyLimit, 3))
                  .arg(head)
                  .arg(lengthRange(h.queryBefore), lengthRange(h.queryAfter), lengthRange(h.keyBefore),
                      lengthRange(h.keyAfter), formatNumber(h.lowest, 3), formatNumber(h.highest, 3),
                      formatNumber(h.inputBound, 3), formatNumber(h.weightBound, 3))
                  .arg(formatNumber(2.0 * h.weightBound, 3))
                  .arg(m_input.model && m_input.model->config.normAddsOne ? tr("(1 + \u03B3)") // Gemma 3's
                                                                          : tr("\u03B3"));
    return text;
}

void QkNormView::drawLengths(const QkNormEffect &e, int head)
{
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const QkNormHead &h = e.heads[size_t(head)];
    const bool normed = e.kind != QkNorm::None;
    const QColor hollow = themeColors(m_spec.theme).background;
    std::vector<QCPAbstractPlottable *> entries;
    const auto curve
        = [&](const std::vector<float> &values, const QColor &colour, Qt::PenStyle style, const QString &name) {
              auto *g = new QCPGraph(x, y);
              for (size_t t = 0; t < values.size(); ++t)
                  g->addData(double(t), values[t]);
              g->setPen(QPen(colour, 2.5, style));
              g->setScatterStyle(
                  QCPScatterStyle(QCPScatterStyle::ssDisc, colour, style == Qt::SolidLine ? colour : hollow, 5));
              g->setName(name);
              entries.push_back(g);
          };
    if (normed) {
        curve(h.queryBefore, kQuery, Qt::DashLine, tr("\u2016q\u2016 before"));
        curve(h.queryAfter, kQuery, Qt::SolidLine, tr("\u2016q\u2016 after"));
        curve(h.keyBefore, kKey, Qt::DashLine, tr("\u2016k\u2016 before"));
        curve(h.keyAfter, kKey, Qt::SolidLine, tr("\u2016k\u2016 after"));
        addReferenceLine(rect, Qt::Horizontal, h.queryLimit, QPen(kQuery, 1.2, Qt::DotLine));
        addReferenceLine(rect, Qt::Horizontal, h.keyLimit, QPen(kKey, 1.2, Qt::DotLine));
    } else {
        curve(h.queryAfter, kQuery, Qt::SolidLine, tr("\u2016q\u2016"));
        curve(h.keyAfter, kKey, Qt::SolidLine, tr("\u2016k\u2016"));
    }
    const double top = std::max({largest(h.queryBefore), largest(h.keyBefore), largest(h.queryAfter),
        largest(h.keyAfter), h.queryLimit, h.keyLimit, 1e-6f});
    const int tokens = int(h.queryBefore.size());
    x->setRange(-0.5, tokens - 0.5);
    setIntegerTicks(x, std::max(1, tokens / 16));
    x->setLabel(tr("position"));
    y->setRange(0, top * 1.08);
    y->setLabel(normed ? tr("length; dotted: the most \u03B3 allows") : tr("length"));
    setPanelTitle(rect, tr("Head %1: q and k").arg(head));
    addPanelLegend(rect, entries);
}

void QkNormView::drawScores(const QkNormEffect &e, int chosen)
{
    m_scores = addAxisRect(0, 1);
    m_heads = int(e.heads.size());
    QCPAxis *x = m_scores->axis(QCPAxis::atBottom), *y = m_scores->axis(QCPAxis::atLeft);
    const ThemeColors colors = themeColors(m_spec.theme);
    const bool normed = e.kind != QkNorm::None;
    std::vector<QCPAbstractPlottable *> entries;
    QCPGraph *span = nullptr;
    double top = 1e-6;
    for (int h = 0; h < m_heads; ++h) {
        const QkNormHead &head = e.heads[size_t(h)];
        auto *g = new QCPGraph(x, y); // one head's range: a thick vertical stroke from its lowest to its highest
        g->addData(h, head.lowest);
        g->addData(h, head.highest);
        g->setPen(QPen(h == chosen ? palette::alert : colors.accent, 9, Qt::SolidLine, Qt::FlatCap));
        if (!span) {
            g->setName(tr("scores"));
            span = g;
            entries.push_back(g);
        } else {
            g->removeFromLegend();
        }
        top = std::max({top, double(std::abs(head.lowest)), double(std::abs(head.highest)), double(head.inputBound),
            double(head.weightBound)});
    }
    const auto marks = [&](bool weights, QCPScatterStyle::ScatterShape shape, const QString &name) {
        auto *g = new QCPGraph(x, y);
        for (int h = 0; h < m_heads; ++h) {
            const QkNormHead &head = e.heads[size_t(h)];
            const double bound = weights ? head.weightBound : head.inputBound;
            g->addData(h, bound);
            g->addData(h, -bound);
        }
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(shape, QPen(colors.text, 2), Qt::NoBrush, 14));
        g->setName(name);
        entries.push_back(g);
    };
    marks(false, QCPScatterStyle::ssPlus, tr("input bound"));
    if (normed)
        marks(true, QCPScatterStyle::ssCross, tr("\u03B3 bound"));
    addReferenceLine(m_scores, Qt::Horizontal, 0, QPen(colors.grid, 1));
    x->setRange(-0.6, m_heads - 0.4);
    setIntegerTicks(x);
    x->grid()->setVisible(false);
    x->setLabel(tr("head (click one)"));
    y->setRange(-top * 1.1, top * 1.1);
    y->setLabel(tr("score"));
    setPanelTitle(m_scores, tr("Each head's scores"));
    addPanelLegend(m_scores, entries);
}

void QkNormView::chooseHeadAt(QMouseEvent *event)
{
    if (!m_scores || m_heads < 1 || !m_scores->rect().contains(event->pos()))
        return;
    const int head = int(std::lround(m_scores->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
    if (head < 0 || head >= m_heads || head == m_spec.head)
        return;
    m_spec.head = head;
    emit specEdited(m_spec);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::qknorm::makeView(QWidget *parent)
{
    return std::make_unique<QkNormView>(parent);
}
