#include "views/heatmaprowmarks.h"

#include "views/palette.h"
#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <algorithm>

namespace atlas {

HeatmapRowMarks::HeatmapRowMarks(QCustomPlot *plot)
    : m_plot(plot)
    , m_veil(new QCPItemRect(plot)) // under the outline
    , m_veilText(new QCPItemText(plot))
    , m_outline(new QCPItemRect(plot))
{
    m_veil->setPen(Qt::NoPen);
    m_veilText->setText(QObject::tr("? hidden until Reveal"));
    m_outline->setBrush(Qt::NoBrush);
    for (QCPAbstractItem *item : {static_cast<QCPAbstractItem *>(m_veil), static_cast<QCPAbstractItem *>(m_veilText),
             static_cast<QCPAbstractItem *>(m_outline)})
        item->setVisible(false);
}

void HeatmapRowMarks::update(int rows, int cols, const std::string &theme, bool contentVisible)
{
    const auto cover = [cols](QCPItemRect *rect, int row) {
        rect->topLeft->setCoords(-0.5, row - 0.5);
        rect->bottomRight->setCoords(cols - 0.5, row + 0.5);
    };
    const bool outlined = contentVisible && m_marked >= 0 && m_marked < rows;
    if (outlined) {
        cover(m_outline, m_marked);
        m_outline->setPen(QPen(theme == "dark" ? palette::inkOn(themeColors(theme).background) : palette::alert,
            std::max(2.0, m_plot->fontMetrics().height() / 6.0)));
    }
    m_outline->setVisible(outlined);
    const bool veiled = contentVisible && m_veiled >= 0 && m_veiled < rows;
    if (veiled) {
        const ThemeColors colors = themeColors(theme);
        cover(m_veil, m_veiled);
        m_veil->setBrush(colors.frame);
        m_veilText->position->setCoords((cols - 1) / 2.0, m_veiled);
        m_veilText->setColor(colors.text);
        m_veilText->setFont(sizedFont(m_plot->font(), 9, true));
    }
    m_veil->setVisible(veiled);
    m_veilText->setVisible(veiled);
}

} // namespace atlas
