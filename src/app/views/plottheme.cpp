#include "views/plottheme.h"

#include "views/palette.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

namespace atlas {

ThemeColors themeColors(const std::string &theme)
{
    if (theme == "dark")
        return {QColor(0x1e, 0x1f, 0x22), QColor(0xe6, 0xe6, 0xe6), QColor(0xa8, 0xa8, 0xa8), QColor(0x55, 0x55, 0x55),
            QColor(0x4f, 0x6a, 0x8a), QColor(0x0c, 0x0c, 0x0c), QColor(0x70, 0x70, 0x70), QColor(0x4e, 0xa3, 0xff),
            QColor(0x8a, 0x8d, 0x93), QColor(0x3a, 0x3d, 0x41), QColor(0x3a, 0x3d, 0x41), QColor(0x4a, 0x4d, 0x53)};
    return {QColor(Qt::white), QColor(0x20, 0x20, 0x20), QColor(0x50, 0x50, 0x50), QColor(0xc8, 0xc8, 0xc8),
        QColor(0xd6, 0xe4, 0xf5), QColor(0x30, 0x30, 0x30), QColor(0xa0, 0xa0, 0xa0), QColor(0x1f, 0x77, 0xb4),
        QColor(0x5f, 0x63, 0x68), QColor(0xe3, 0xe3, 0xe3), QColor(0xf0, 0xf0, 0xf0), QColor(Qt::white)};
}

void applyPlotTheme(QCustomPlot *plot, const std::string &theme)
{
    const ThemeColors colors = themeColors(theme);
    const QColor &background = colors.background, &text = colors.text, &axis = colors.axis;
    const QColor grid = colors.grid;
    const QFont tickFont = sizedFont(plot->font(), 10);
    plot->setBackground(background);
    QList<QCPAxis *> axes;
    for (QCPAxisRect *r : plot->axisRects()) {
        r->setBackground(background);
        axes += r->axes();
    }
    for (QCPLayoutElement *e : plot->plotLayout()->elements(true)) {
        if (auto *scale = qobject_cast<QCPColorScale *>(e))
            axes += scale->axis();
        if (auto *title = qobject_cast<QCPTextElement *>(e))
            title->setTextColor(text);
    }
    for (QCPAxis *a : axes) {
        a->setBasePen(QPen(axis));
        a->setTickPen(QPen(axis));
        a->setSubTickPen(QPen(axis));
        a->setTickLabelColor(text);
        a->setLabelColor(text);
        a->setTickLabelFont(tickFont);
        a->setLabelFont(tickFont);
        a->grid()->setPen(QPen(grid, 1, Qt::DotLine));
        a->grid()->setZeroLinePen(QPen(axis, 1));
    }
}

const QList<QColor> &seriesColours()
{
    using namespace palette;
    static const QList<QColor> colours = {tableauBlue, tableauOrange, tableauRed, tableauTeal, tableauGreen,
        tableauYellow, tableauPurple, tableauPink, tableauBrown, tableauGrey};
    return colours;
}

void applyThemeBackground(QWidget *widget, const std::string &theme)
{
    const ThemeColors colors = themeColors(theme);
    QPalette pal = widget->palette();
    pal.setColor(QPalette::Window, colors.background);
    pal.setColor(QPalette::WindowText, colors.text);
    // A message's links (a built-in model, Run anyway) in the theme's accent: the application's link blue is
    // unreadable on the dark background.
    pal.setColor(QPalette::Link, colors.accent);
    pal.setColor(QPalette::LinkVisited, colors.accent);
    widget->setPalette(pal);
    widget->setAutoFillBackground(true);
}

void applyAxisRectTheme(QCPAxisRect *rect, const std::string &theme, const QFont &base)
{
    const ThemeColors colors = themeColors(theme);
    for (QCPAxis *axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        axis->setBasePen(QPen(colors.axis));
        axis->setTickPen(QPen(colors.axis));
        axis->setSubTickPen(QPen(colors.axis));
        axis->setTickLabelColor(colors.text);
        axis->setLabelColor(colors.text);
        axis->setTickLabelFont(sizedFont(base, 9));
        axis->setLabelFont(sizedFont(base, 10));
        axis->grid()->setPen(QPen(colors.frame, 0, Qt::DotLine));
    }
}

void setIntegerTicks(QCPAxis *axis, int step)
{
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(std::max(1, step));
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples); // 2, 5, 10 … times the step where 1 would crowd
    axis->setTicker(ticker);
}

void legendUnderAxes(QCustomPlot *plot, int columns)
{
    QCPLegend *legend = plot->legend;
    legend->setVisible(true);
    if (legend->layout() == plot->axisRect()->insetLayout())
        plot->axisRect()->insetLayout()->take(legend);
    QCPLayoutGrid *grid = plot->plotLayout();
    const int row = grid->rowCount();
    grid->addElement(row, 0, legend);
    grid->setRowStretchFactor(row, 0.001);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(columns);
    legend->setBorderPen(Qt::NoPen);
}

} // namespace atlas
