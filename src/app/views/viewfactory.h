#pragma once

#include "views/view.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace atlas {

using ViewMaker = std::unique_ptr<View> (*)(QWidget *parent);

// The view widget for each kind of view/viewkinds.h; throws atlas::Error for another.
std::unique_ptr<View> createView(const std::string &kind, QWidget *parent = nullptr);
// The kinds that have a widget, sorted: the same as the descriptors' (tst_views).
std::vector<std::string> widgetKinds();
// The widget of each view folder, src/views/NAME/, by its kind: made by src/views/CMakeLists.txt.
std::vector<std::pair<std::string, ViewMaker>> viewFolderMakers();

} // namespace atlas
