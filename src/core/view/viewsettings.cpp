#include "view/viewsettings.h"

#include <variant>

namespace atlas {

namespace {

void copyKey(const SpecKey &key, const ViewSpec &from, ViewSpec &to)
{
    std::visit([&](const auto &field) { setField(to, field, fieldValue(from, field)); }, key.field);
}

bool sameValue(const SpecKey &key, const ViewSpec &a, const ViewSpec &b)
{
    return std::visit([&](const auto &field) { return fieldValue(a, field) == fieldValue(b, field); }, key.field);
}

} // namespace

ViewSpec withViewSettings(const ViewSpec &next, const ViewSpec &current, const ViewSpec *saved)
{
    if (next.view == current.view)
        return next;
    const ViewSpec defaults;
    ViewSpec shown = next;
    for (const SpecKey &key : specKeys())
        if (key.ownedByView && viewReadsKey(next.view, key) && sameValue(key, next, current))
            copyKey(key, saved ? *saved : defaults, shown);
    return shown;
}

void resetModelSettings(ViewSpec &spec)
{
    const ViewSpec defaults;
    for (const SpecKey &key : specKeys())
        if (key.perModel)
            copyKey(key, defaults, spec);
}

} // namespace atlas
