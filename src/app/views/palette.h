#pragma once

#include <QColor>

#include <cmath>

// Every named colour the views draw with, in one place; the theme's surfaces and text are plottheme.h's
// ThemeColors, and the colour maps of heat maps colormaps.h's.
namespace atlas::palette {

// Tableau 10, in its order (seriesColours() cycles through them): series told apart on light and dark.
inline const QColor tableauBlue {0x4e, 0x79, 0xa7}, tableauOrange {0xf2, 0x8e, 0x2b}, tableauRed {0xe1, 0x57, 0x59},
    tableauTeal {0x76, 0xb7, 0xb2}, tableauGreen {0x59, 0xa1, 0x4f}, tableauYellow {0xed, 0xc9, 0x48},
    tableauPurple {0xb0, 0x7a, 0xa1}, tableauPink {0xff, 0x9d, 0xa7}, tableauBrown {0x9c, 0x75, 0x5f},
    tableauGrey {0xba, 0xb0, 0xac};

// Okabe and Ito's colour-blind-safe set: where two kinds must never be confused (memory categories, the
// architecture diagram's residual stream and an encoder's K/V).
inline const QColor okabeGrey {0x99, 0x99, 0x99}, okabePink {0xcc, 0x79, 0xa7}, okabeSkyBlue {0x56, 0xb4, 0xe9},
    okabeGreen {0x00, 0x9e, 0x73}, okabeOrange {0xe6, 0x9f, 0x00}, okabeVermillion {0xd5, 0x5e, 0x00};

// Something lost or wrong: a dropped token, an overflowing buffer, a switched-off head, the point being measured.
inline const QColor alert {0xd6, 0x27, 0x28};
// What an exported picture starts from before its view paints (a view paints its own theme's background).
inline const QColor paper {0xff, 0xff, 0xff};
// The hatch over masked cells, and over cells exactly 0, before a colour map chooses them (views/maskedcellslayer.h).
inline const QColor maskedHatch {0x80, 0x80, 0x80}, zeroHatch {0xff, 0xff, 0xff};
// The head or cell singled out in a grid (the heads view's chosen thumbnail).
inline const QColor selected {0xff, 0x8c, 0x00};
// The token that truly belongs at a hidden position (the masked fills' cards).
inline const QColor original {0x31, 0xa3, 0x54};
// A dropped token's fill, pale enough for black text on light and dark backgrounds.
inline const QColor alertFill {0xf6, 0xc4, 0xc4};

// The spans of a span corruption (and next-sentence prediction's sentences A and B): pale, under black text.
inline const QColor spanFills[] = {{0xfd, 0xd0, 0xa2}, {0xbc, 0xbd, 0xdc}, {0x9e, 0xca, 0xe1}, {0xa1, 0xd9, 0x9b}};

// The memory graph's nodes: computing, kept, dropped, recomputing, recomputed, backward, done.
inline const QColor nodeKept {0x2f, 0x7d, 0x4f}, nodeRecomputing {0xd9, 0x82, 0x2b}, nodeRecomputed {0xf1, 0xc2, 0x7d},
    nodeBackward {0xc0, 0x39, 0x2b}, nodeDone {0x8f, 0xb8, 0xde};

// Two measured curves on one plot, each a light and a dark variant: a cool one (the weights, the scaled scores) and
// a warm one (the context, the raw scores).
inline QColor coolCurve(bool dark)
{
    return dark ? QColor(0x7e, 0xb3, 0xe6) : QColor(0x2f, 0x6a, 0xa3);
}
inline QColor warmCurve(bool dark)
{
    return dark ? QColor(0xf5, 0xa5, 0x5a) : QColor(0xd9, 0x70, 0x0f);
}
inline QColor rawScores(bool dark)
{
    return dark ? QColor(0xff, 0x8a, 0x5b) : QColor(0xd1, 0x49, 0x5b);
}

// Text on a coloured cell, chip or box: black or white, whichever stands out more from `fill` (WCAG's contrast of
// relative luminances). The one rule for every view; a translucent fill is judged as painted over white.
inline QColor inkOn(QColor fill)
{
    if (fill.alphaF() < 1.0) {
        const double a = fill.alphaF();
        fill = QColor::fromRgbF(
            float(a * fill.redF() + 1 - a), float(a * fill.greenF() + 1 - a), float(a * fill.blueF() + 1 - a));
    }
    const auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    const double luminance
        = 0.2126 * channel(fill.redF()) + 0.7152 * channel(fill.greenF()) + 0.0722 * channel(fill.blueF());
    // Against black (L + 0.05) / 0.05, against white 1.05 / (L + 0.05): equal where L ≈ 0.179.
    return luminance > 0.179 ? QColor(0, 0, 0) : QColor(255, 255, 255);
}

} // namespace atlas::palette
