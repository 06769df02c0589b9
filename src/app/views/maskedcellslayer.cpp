#include "views/maskedcellslayer.h"

#include "views/heatmapplot.h"

#include <algorithm>
#include <limits>

namespace atlas {

MaskedCellsLayer::MaskedCellsLayer(HeatmapPlot *plot)
    : QCPLayerable(plot, QStringLiteral("main"), plot->axisRect())
    , m_plot(plot)
{
}

QRect MaskedCellsLayer::clipRect() const
{
    return m_plot->axisRect()->rect();
}

void MaskedCellsLayer::applyDefaultAntialiasingHint(QCPPainter *painter) const
{
    applyAntialiasingHint(painter, false, QCP::aeNone);
}

void MaskedCellsLayer::draw(QCPPainter *painter)
{
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const Pooled &p = m_plot->pooled();
    const bool zeros = p.hasZero && !m_plot->exactZeroNote().isEmpty() && !m_plot->maskMode();
    if ((!p.hasNegInf && !zeros) || m_plot->showingMessage())
        return;
    const CellWindow w = m_plot->cellWindow();
    const int rowEnd = w.row0 + w.rows, colEnd = w.col0 + w.cols;
    auto colEdge
        = [&](int pc) { return m_plot->xAxis->coordToPixel(std::min(p.col0 + pc * p.blockCols, colEnd) - 0.5); };
    auto rowEdge
        = [&](int pr) { return m_plot->yAxis->coordToPixel(std::min(p.row0 + pr * p.blockRows, rowEnd) - 0.5); };
    // The runs of pooled cells equal to `value` in each pooled row, as rectangles.
    auto runsOf = [&](float value) {
        QVector<QRectF> rects;
        for (int r = 0; r < p.rows; ++r) {
            for (int c = 0; c < p.cols; ++c) {
                if (p.at(r, c) != value)
                    continue;
                const int c0 = c; // a run: [c0, c]
                while (c + 1 < p.cols && p.at(r, c + 1) == value)
                    ++c;
                rects.append(
                    QRectF(QPointF(colEdge(c0), rowEdge(r)), QPointF(colEdge(c + 1), rowEdge(r + 1))).normalized());
            }
        }
        return rects;
    };
    painter->setPen(Qt::NoPen);
    if (p.hasNegInf) {
        painter->setBrush(QBrush(hatch, Qt::BDiagPattern));
        painter->drawRects(runsOf(kNegInf));
    }
    if (zeros) { // exactly 0 but allowed: the other diagonal, over the colour map's colour for 0
        painter->setBrush(QBrush(zeroHatch, Qt::FDiagPattern));
        painter->drawRects(runsOf(0.0f));
    }
}

} // namespace atlas
