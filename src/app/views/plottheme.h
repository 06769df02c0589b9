#pragma once

#include <QColor>
#include <QList>

#include <string>

class QCPAxis;
class QCPAxisRect;
class QCustomPlot;
class QFont;
class QWidget;

namespace atlas {

// The colours of a view theme (light | dark; anything else is light), shared by every view and plot.
struct ThemeColors
{
    QColor background, text, axis, frame;
    QColor allowed, maskedFill, maskedHatch; // the mask drawn by itself: 0 cells, −∞ cells, their hatching
    QColor accent; // the one highlight: the stepper's operation, bars, what is chosen
    QColor muted; // secondary text: hints, subtitles
    QColor grid; // a plot's grid lines
    QColor control, field; // a button's face, an input field's or radio button's (widgets inside a themed view)
};
ThemeColors themeColors(const std::string &theme);

// Colours for series (heads, experts) that must tell apart on light and dark backgrounds: Tableau 10.
const QList<QColor> &seriesColours();

// A QCustomPlot's background, axes, grid and text in the theme's colours.
void applyPlotTheme(QCustomPlot *plot, const std::string &theme);
// A widget filled with the theme's background and written in its text colour (a view's message, the page under
// its plots).
void applyThemeBackground(QWidget *widget, const std::string &theme);
// The bottom and left axes of an axis rect added by hand (applyPlotTheme styles the default one): the theme's
// colours, tick labels at 9 and labels at 10 points as designed, scaled as `base` (views/viewfonts.h).
void applyAxisRectTheme(QCPAxisRect *rect, const std::string &theme, const QFont &base);
// Bars and scatter symbols drawn this many to a plot or more are a pixel or two wide: antialiasing them changes
// nothing one can see, and it was most of the GUI thread's time in painting thousands of them.
constexpr int kAntialiasedMarksBelow = 512;

// An axis that counts (blocks, slots, components): ticks on whole numbers only, every `step` at least.
void setIntegerTicks(QCPAxis *axis, int step = 1);

// The plot's own legend as a row of its own under its axes, `columns` entries a row: inside the axes it would cover
// the data (a tall bar, a curve's end).
void legendUnderAxes(QCustomPlot *plot, int columns);

} // namespace atlas
