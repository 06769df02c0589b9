#include "views/viewfactory.h"

#include "util/commalist.h"
#include "util/error.h"
#include "view/viewkinds.h"

#include <map>

namespace atlas {

namespace {

// One widget per view folder (src/views/NAME/, its `makeView`); tst_views holds the kinds and the widgets to each
// other.
const std::map<std::string, ViewMaker> &makers()
{
    static const std::map<std::string, ViewMaker> table = [] {
        std::map<std::string, ViewMaker> made;
        for (const auto &[kind, make] : viewFolderMakers())
            if (!made.emplace(kind, make).second)
                throw Error("two widgets for the view kind '" + kind + "'");
        return made;
    }();
    return table;
}

} // namespace

std::vector<std::string> widgetKinds()
{
    std::vector<std::string> kinds;
    for (const auto &[kind, make] : makers())
        kinds.push_back(kind);
    return kinds;
}

std::unique_ptr<View> createView(const std::string &kind, QWidget *parent)
{
    const auto it = makers().find(kind);
    if (it != makers().end())
        return it->second(parent);
    std::vector<std::string> known;
    for (const ViewKind &k : viewKinds())
        known.push_back(k.kind);
    throw Error("unknown view kind '" + kind + "' (known kinds: " + joinedCommaList(known) + ")");
}

} // namespace atlas
