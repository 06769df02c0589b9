#include "inversionerror/inversionerrorview.h"

#include "inversionerror/inversionerror.h"
#include "viewmodel/viewinput.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

constexpr double kFloor = 1e-18; // a rebuild exact to the last bit is drawn here (log scale)

} // namespace

InversionErrorView::InversionErrorView(QWidget *parent)
    : ResultPlotView(parent)
{
}

QString InversionErrorView::draw(const InversionErrorAnalysis &a)
{
    setTitle(tr("Inputs rebuilt by inversion: the error per block"));
    QCPAxisRect *rect = addAxisRect(0, 0);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    y->setScaleType(QCPAxis::stLogarithmic);
    auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
    ticker->setTickCount(4);
    ticker->setSubTickCount(0);
    y->setTicker(ticker);
    y->setNumberFormat("eb");
    y->setNumberPrecision(0);
    y->setTickLabelFont(sizedFont(font(), 10)); // QCustomPlot draws the exponents at ¾ of it, rounded down
    setIntegerTicks(x);
    x->setRangeReversed(true);
    double low = 1, high = kFloor;
    QStringList gradients;
    for (size_t i = 0; i < a.errors.size(); ++i) {
        const InversionError &e = a.errors[i];
        QVector<double> blocks, errors;
        for (size_t b = 0; b < e.maxError.size(); ++b) {
            blocks << double(b);
            errors << std::max(e.maxError[b], kFloor);
            low = std::min(low, errors.back());
            high = std::max(high, errors.back());
        }
        QCPGraph *g = plot()->addGraph(x, y);
        const QColor color = seriesColours().value(int(i));
        g->setData(blocks, errors, true);
        g->setPen(QPen(color, 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 6));
        g->setName(QString::fromLatin1(streamPrecisionName(e.precision)));
        gradients << tr("%1 %2").arg(
            QString::fromLatin1(streamPrecisionName(e.precision)), formatNumber(e.gradientError, 2));
    }
    x->setLabel(tr("block (rebuilt from the last, left, down to 0)"));
    y->setLabel(tr("max error"));
    x->setRange(-0.5, std::max(0, a.depth - 1) + 0.5);
    y->setRange(low / 10, high * 10);
    addLegend(4);
    const double stream = a.errors.empty() || a.errors.front().maxStream.empty()
        ? 0
        : *std::max_element(a.errors.front().maxStream.begin(), a.errors.front().maxStream.end());
    return tr("%1, %2 blocks, %3 tokens; |X| reaches %4. Each rebuilt input is the next rebuild's output, so rounding "
              "adds up going down. Gradient error, max |g rebuilt − g stored| / max |g stored|: %5. Exact rebuilds "
              "are drawn at 10⁻¹⁸ (float64 adds the float32 terms exactly).")
        .arg(a.ownWeights ? tr("This model's own weights") : tr("A random-weight reversible model of this shape"))
        .arg(a.depth)
        .arg(a.tokens)
        .arg(formatNumber(stream, 3))
        .arg(gradients.join(QStringLiteral(", ")));
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::inversionerror::makeView(QWidget *parent)
{
    return std::make_unique<InversionErrorView>(parent);
}
