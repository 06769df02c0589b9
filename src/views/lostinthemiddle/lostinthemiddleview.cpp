#include "lostinthemiddle/lostinthemiddleview.h"

#include "lostinthemiddle/lostinthemiddle.h"
#include "train/task.h"
#include "views/colormaps.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <algorithm>

namespace atlas {

LostInTheMiddleView::LostInTheMiddleView(QWidget *parent)
    : ResultPlotView(parent)
{
    plot()->setToolTip(tr("Held-out contexts of ten key\u2013value pairs, each pair asked in turn: how often the model "
                          "names the value, and where its answer position attends"));
}

QString LostInTheMiddleView::pendingText() const
{
    return tr("Asking for each pair of held-out contexts in turn\u2026");
}

QString LostInTheMiddleView::draw(const LostInTheMiddleAnalysis &a)
{
    const RetrievalByPosition &own = a.sweeps.front();
    const int layer = std::clamp(m_spec.layer, 0, std::max(0, int(own.attention.size()) - 1));
    setTitle(tr("Lost in the middle \u00B7 %1 \u00B7 %2 key\u2013value pairs, each asked in turn")
                 .arg(QString::fromStdString(own.model))
                 .arg(kRetrievalPairs));
    drawAccuracy(a.sweeps);
    drawAttention(own, layer);

    const QString key = QStringLiteral("kqz").left(kRetrievalKeyLength),
                  value = QStringLiteral("481").left(kRetrievalValueLength);
    QString text
        = tr("Each context holds %1 pairs such as \u201C%2%3\u201D, a key and its value, then \u201C?%2\u201D: "
             "the answer is that key's value. ")
              .arg(kRetrievalPairs)
              .arg(key, value);
    for (const RetrievalByPosition &s : a.sweeps)
        text += tr("%1 names the value of the first pair %2 of the time, of the middle pairs (positions 3\u20136) "
                   "%3, of the last %4. ")
                    .arg(QString::fromStdString(s.model), formatPercent(s.first()), formatPercent(s.middle()),
                        formatPercent(s.last()));
    double onPair = 0;
    for (int p = 0; p < kRetrievalPairs; ++p)
        onPair += own.attention[size_t(layer)][size_t(p)][size_t(p)] / kRetrievalPairs;
    text += tr("In layer %1 the answer position puts %2 of its attention on the asked pair, on average. The dotted "
               "line is a digit's chance (10 %); %3 held-out contexts per position.")
                .arg(layer)
                .arg(formatPercent(onPair))
                .arg(own.examples);
    return text;
}

void LostInTheMiddleView::drawAccuracy(const std::vector<RetrievalByPosition> &sweeps)
{
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    for (size_t m = 0; m < sweeps.size(); ++m) {
        const RetrievalByPosition &s = sweeps[m];
        const QColor colour = seriesColours().at(int(m));
        const auto curve = [&](const std::vector<float> &values, Qt::PenStyle style,
                               QCPScatterStyle::ScatterShape shape, const QString &what) {
            auto *g = new QCPGraph(x, y);
            for (size_t p = 0; p < values.size(); ++p)
                g->addData(double(p), 100.0 * values[p]);
            g->setPen(QPen(colour, 2.5, style));
            g->setScatterStyle(QCPScatterStyle(shape, colour, colour, 7));
            g->setName(QString::fromStdString(s.model) + QStringLiteral(": ") + what);
        };
        curve(s.exact, Qt::SolidLine, QCPScatterStyle::ssDisc, tr("the whole value"));
        curve(s.digits, Qt::DashLine, QCPScatterStyle::ssSquare, tr("each digit"));
    }
    addReferenceLine(rect, Qt::Horizontal, 10, QPen(themeColors(m_spec.theme).text, 1, Qt::DotLine));
    x->setRange(-0.4, kRetrievalPairs - 0.6);
    setIntegerTicks(x);
    x->ticker()->setTickCount(kRetrievalPairs); // every position labelled
    x->setLabel(tr("position of the asked pair (0: first, %1: last)").arg(kRetrievalPairs - 1));
    y->setRange(0, 102);
    y->setLabel(tr("named right (%)"));
    setPanelTitle(rect, tr("Accuracy by where the asked pair stands"));
    addLegend(4); // under the panels: at 150 % an inset legend would cover the curves
}

void LostInTheMiddleView::drawAttention(const RetrievalByPosition &s, int layer)
{
    QCPAxisRect *rect = addAxisRect(0, 1);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const int n = kRetrievalPairs; // the first pair on top
    QCPColorMap *map = addMatrixMap(
        rect, n, n, [&](int asked, int pair) { return s.attention[size_t(layer)][size_t(asked)][size_t(pair)]; },
        colormap(m_spec.colormap), 0, 1);
    for (QCPAxis *axis : {x, y}) {
        setIntegerTicks(axis);
        axis->ticker()->setTickCount(n);
    }
    x->setLabel(tr("pair attended"));
    y->setLabel(tr("pair asked"));
    addColorScale(0, 2, map, rect, tr("share of the answer's attention"));
    setPanelTitle(rect, tr("Where the answer looks, layer %1 (heads averaged)").arg(layer));
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::lostinthemiddle::makeView(QWidget *parent)
{
    return std::make_unique<LostInTheMiddleView>(parent);
}
