#include "views/heatmapcelltexts.h"

#include "views/heatmapplot.h"
#include "views/palette.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace atlas {

void HeatmapCellTexts::reset(HeatmapPlot *plot, int rows, int cols)
{
    for (QCPItemText *item : m_items)
        if (item)
            plot->removeItem(item);
    m_items.assign(size_t(rows) * size_t(cols), nullptr);
    m_rows = rows;
    m_cols = cols;
}

void HeatmapCellTexts::write(HeatmapPlot *plot, const QFont &font, const Text &text)
{
    if (m_items.empty() || plot->isHidden())
        return;
    const QPointF a = plot->cellCenter(0, 0), b = plot->cellCenter(std::min(1, m_rows - 1), std::min(1, m_cols - 1));
    const double cellWidth = m_cols > 1 ? std::abs(b.x() - a.x()) : plot->axisRect()->width();
    const double cellHeight = m_rows > 1 ? std::abs(b.y() - a.y()) : plot->axisRect()->height();
    const QFontMetrics metrics(font);
    bool changed = false;
    for (int r = 0; r < m_rows; ++r)
        for (int c = 0; c < m_cols; ++c) {
            QCPItemText *&item = m_items[size_t(r) * size_t(m_cols) + size_t(c)];
            QString written = text(r, c, cellWidth, cellHeight);
            if (metrics.horizontalAdvance(written) + 4 > cellWidth || metrics.height() > cellHeight)
                written.clear();
            if (!item && written.isEmpty())
                continue;
            if (!item) {
                item = new QCPItemText(plot);
                item->setClipToAxisRect(true);
                item->position->setType(QCPItemPosition::ptPlotCoords);
                item->position->setCoords(c, r);
                item->setPositionAlignment(Qt::AlignCenter);
            }
            // Dark text on the bright end of the colour map, light on the dark end.
            const QColor cell = plot->colorMap()->gradient().color(
                plot->displayedValue(r, c), plot->colorMap()->dataRange(), plot->logScale());
            const QColor ink = palette::inkOn(cell);
            if (item->text() != written || item->font() != font || item->color() != ink
                || item->visible() == written.isEmpty()) {
                item->setText(written);
                item->setFont(font);
                item->setColor(ink);
                item->setVisible(!written.isEmpty());
                changed = true;
            }
        }
    if (changed)
        plot->replot(QCustomPlot::rpQueuedReplot);
}

QString HeatmapCellTexts::shown(int row, int col) const
{
    const size_t at = size_t(row) * size_t(m_cols) + size_t(col);
    return at < m_items.size() && m_items[at] && m_items[at]->visible() ? m_items[at]->text() : QString();
}

} // namespace atlas
