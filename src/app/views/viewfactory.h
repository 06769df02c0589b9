#pragma once

#include "views/view.h"

#include <memory>
#include <string>
#include <vector>

namespace atlas {

// The view widget for each kind of view/viewkinds.h; throws atlas::Error for another.
std::unique_ptr<View> createView(const std::string &kind, QWidget *parent = nullptr);
// The kinds that have a widget, sorted: the same as the descriptors' (tst_views).
std::vector<std::string> widgetKinds();

} // namespace atlas
