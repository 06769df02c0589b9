#pragma once

#include <string>
#include <vector>

namespace atlas {

// Every kind of view, in the order of the app's tabs: the spec's "view" key, the tab's title, and a line for
// menus and lessons. ViewSpec validates against it, the app builds its tabs from it, the view factory makes a
// widget for each: adding a view starts here (docs/architecture.md).
struct ViewKind
{
    std::string kind; // "attention"
    std::string title; // "Attention"
    std::string summary; // "one head's attention weights as a heat map"
    std::string group; // the app's upper row of tabs: "Attention", "Inside the model", "Efficient attention"
};

const std::vector<ViewKind> &viewKinds();
// The entry of `kind`; nullptr for an unknown one.
const ViewKind *findViewKind(const std::string &kind);

} // namespace atlas
