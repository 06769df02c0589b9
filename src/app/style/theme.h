#pragma once

#include <QColor>
#include <QString>

namespace atlas {

// Applies the light or dark palette (Fusion style) to the whole application.
void applyTheme(bool dark);
// Black on white with a strong blue selection: the presentation palette, legible on a washed-out projector.
void applyHighContrastTheme();

// Text colours that keep 4.5:1 against the current palette's window and base in either theme: a warning (an input the
// app refuses, a failed run) and an accent (what the model wrote).
QColor warningTextColor();
QColor accentTextColor();
// "color: …" for a style sheet, in one of the colours above.
QString textColorStyle(const QColor &color);

} // namespace atlas
