#pragma once

#include <QColor>
#include <QList>

#include <string>

class QCustomPlot;

namespace atlas {

// The colours of a view theme (light | dark; anything else is light), shared by every view and plot.
struct ThemeColors
{
    QColor background, text, axis, frame;
    QColor allowed, maskedFill, maskedHatch; // the mask drawn by itself: 0 cells, −∞ cells, their hatching
};
ThemeColors themeColors(const std::string &theme);

// Colours for series (heads, experts) that must tell apart on light and dark backgrounds: Tableau 10.
const QList<QColor> &seriesColours();

// A QCustomPlot's background, axes, grid and text in the theme's colours.
void applyPlotTheme(QCustomPlot *plot, const std::string &theme);

} // namespace atlas
