#pragma once

namespace atlas {

// Applies the light or dark palette (Fusion style) to the whole application.
void applyTheme(bool dark);
// Black on white with a strong blue selection: the presentation palette, legible on a washed-out projector.
void applyHighContrastTheme();

} // namespace atlas
