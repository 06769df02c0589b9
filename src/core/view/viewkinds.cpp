#include "view/viewkinds.h"

#include "util/error.h"

namespace atlas {

namespace {

// Where `kind` stands in `kinds`; −1 when none describes it. The one place a view's name is looked up.
int indexIn(const std::vector<ViewKind> &kinds, const std::string &kind)
{
    for (size_t i = 0; i < kinds.size(); ++i)
        if (kinds[i].kind == kind)
            return int(i);
    return -1;
}

// The kinds in the order of the tabs: the one that follows no other first, then each after the kind its `after` names.
// Two kinds following the same one would leave their order to the order the folders register in: refused.
std::vector<ViewKind> inTabOrder(std::vector<ViewKind> unplaced)
{
    for (size_t i = 0; i < unplaced.size(); ++i)
        for (size_t j = i + 1; j < unplaced.size(); ++j)
            if (unplaced[i].after == unplaced[j].after)
                throw Error("the view kinds '" + unplaced[i].kind + "' and '" + unplaced[j].kind + "' both follow '"
                    + unplaced[i].after + "': give one of them the other as its `after`");
    std::vector<ViewKind> kinds;
    bool firstPlaced = false;
    while (!unplaced.empty()) {
        const size_t before = unplaced.size();
        for (auto it = unplaced.begin(); it != unplaced.end();) {
            const bool first = it->after.empty();
            const int anchor = first ? -1 : indexIn(kinds, it->after);
            if (first ? firstPlaced : anchor < 0) {
                ++it;
                continue;
            }
            firstPlaced = firstPlaced || first;
            kinds.insert(kinds.begin() + (anchor + 1), std::move(*it));
            it = unplaced.erase(it);
        }
        if (unplaced.size() == before) {
            const ViewKind &k = unplaced.front();
            throw Error(k.after.empty()
                    ? "the view kind '" + k.kind + "' claims the first tab (an empty `after`), which another has"
                    : "the view kind '" + k.kind + "' follows '" + k.after + "', which no view places");
        }
    }
    return kinds;
}

} // namespace

const std::vector<ViewKind> &viewKinds()
{
    static const std::vector<ViewKind> kinds = inTabOrder(viewFolderKinds());
    return kinds;
}

int viewKindIndex(const std::string &kind)
{
    return indexIn(viewKinds(), kind);
}

const ViewKind *findViewKind(const std::string &kind)
{
    const int index = viewKindIndex(kind);
    return index < 0 ? nullptr : &viewKinds()[size_t(index)];
}

} // namespace atlas
