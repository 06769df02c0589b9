#pragma once

namespace atlas {

// Applies the light or dark palette (Fusion style) to the whole application.
void applyTheme(bool dark);

} // namespace atlas
