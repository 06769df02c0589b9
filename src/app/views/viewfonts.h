#pragma once

#include <QFont>
#include <QFontMetrics>
#include <QStringList>

namespace atlas {

// The point size every view's text sizes are designed at: the app's font at zoom 100 %. The app's zoom (Ctrl+=,
// Ctrl+−, Ctrl+0) scales the application font, every widget's font() follows it, and so does every size below.
inline constexpr double kDesignPoints = 10.0;

// A font of `points` as designed at zoom 100 %, scaled as `base` (a widget's font()) is scaled against
// kDesignPoints: the one way views size their text, so that zoom reaches every label, tick and title.
inline QFont sizedFont(const QFont &base, double points, bool bold = false)
{
    QFont f = base;
    const double scale = base.pointSizeF() > 0 ? base.pointSizeF() / kDesignPoints : 1.0;
    f.setPointSizeF(points * scale);
    f.setBold(bold);
    return f;
}

// `base` times `factor` (a caption a little smaller than the text around it).
inline QFont relativeFont(const QFont &base, double factor, bool bold = false)
{
    QFont f = base;
    if (base.pointSizeF() > 0)
        f.setPointSizeF(base.pointSizeF() * factor);
    f.setBold(bold);
    return f;
}

// `text` broken into lines of at most `width` pixels, at spaces (its own line breaks kept): for text that a
// plot draws without wrapping (titles, messages), so it never runs past the plot's edge.
inline QString wrappedToWidth(const QString &text, const QFontMetrics &metrics, int width)
{
    QStringList out;
    for (const QString &paragraph : text.split(QLatin1Char('\n'))) {
        QString line;
        for (const QString &word : paragraph.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            if (!line.isEmpty() && metrics.horizontalAdvance(line + QLatin1Char(' ') + word) > width) {
                out << line;
                line = word;
            } else {
                line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
            }
        }
        out << line;
    }
    return out.join(QLatin1Char('\n'));
}

} // namespace atlas
