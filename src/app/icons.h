#pragma once

#include <QColor>
#include <QIcon>

namespace atlas {

enum class AppIcon { Rewind, StepBack, Step, RunToEnd, Info };

// The toolbar's icons, drawn in `color` (the palette's text colour), so they stay visible in both themes: the
// style's standard media icons are black on any background.
QIcon appIcon(AppIcon icon, const QColor &color);

} // namespace atlas
