#pragma once

#include "views/view.h"

#include <memory>
#include <string>

namespace atlas {

// The view widget for each kind of view/viewkinds.h; throws atlas::Error for another.
std::unique_ptr<View> createView(const std::string &kind, QWidget *parent = nullptr);

} // namespace atlas
