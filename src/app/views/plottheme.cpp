#include "views/plottheme.h"

#include "views/viewfonts.h"

#include <qcustomplot.h>

namespace atlas {

ThemeColors themeColors(const std::string &theme)
{
    if (theme == "dark")
        return {QColor(0x1e, 0x1f, 0x22), QColor(0xe6, 0xe6, 0xe6), QColor(0xa8, 0xa8, 0xa8), QColor(0x55, 0x55, 0x55),
            QColor(0x4f, 0x6a, 0x8a), QColor(0x0c, 0x0c, 0x0c), QColor(0x70, 0x70, 0x70)};
    return {QColor(Qt::white), QColor(0x20, 0x20, 0x20), QColor(0x50, 0x50, 0x50), QColor(0xc8, 0xc8, 0xc8),
        QColor(0xd6, 0xe4, 0xf5), QColor(0x30, 0x30, 0x30), QColor(0xa0, 0xa0, 0xa0)};
}

void applyPlotTheme(QCustomPlot *plot, const std::string &theme)
{
    const ThemeColors colors = themeColors(theme);
    const QColor &background = colors.background, &text = colors.text, &axis = colors.axis;
    const QColor grid = theme == "dark" ? QColor(0x3a3d41) : QColor(0xe3e3e3);
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
    static const QList<QColor> colours = {QColor(0x4e79a7), QColor(0xf28e2b), QColor(0xe15759), QColor(0x76b7b2),
        QColor(0x59a14f), QColor(0xedc948), QColor(0xb07aa1), QColor(0xff9da7), QColor(0x9c755f), QColor(0xbab0ac)};
    return colours;
}

void applyThemeBackground(QWidget *widget, const std::string &theme)
{
    const ThemeColors colors = themeColors(theme);
    QPalette pal = widget->palette();
    pal.setColor(QPalette::Window, colors.background);
    pal.setColor(QPalette::WindowText, colors.text);
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

} // namespace atlas
