#pragma once

#include "view/viewspec.h"

namespace atlas {

// What a view keeps of its own while others are shown (SpecKey::ownedByView), and what a model opened afresh starts
// from (SpecKey::perModel).

// `next` as the window shows it after `current`: when `next` shows another view, each key that view owns and the
// caller left as it was takes the value the view had when it was last shown (`saved`), or its default (nullptr: never
// shown). Keys the caller changed, and shared keys, stay as `next` has them.
ViewSpec withViewSettings(const ViewSpec &next, const ViewSpec &current, const ViewSpec *saved);

// `spec` with every key that names something of one model back at its default.
void resetModelSettings(ViewSpec &spec);

} // namespace atlas
