#pragma once

#include "train/objectives.h"
#include "views/palette.h"

#include <QColor>

#include <iterator>

namespace atlas {

// The colours of what a pretraining objective did to a token, shared by the Objectives and Masked fills views: light
// fills (ColorBrewer's pastel blues, reds, greens, oranges, purples) that keep black text readable in both themes.
inline QColor fateColor(CorruptedText::Fate fate)
{
    switch (fate) {
    case CorruptedText::Fate::Masked:
        return {0x9e, 0xca, 0xe1};
    case CorruptedText::Fate::Random:
        return {0xfc, 0x92, 0x72};
    case CorruptedText::Fate::Unchanged:
        return {0xa1, 0xd9, 0x9b};
    case CorruptedText::Fate::Kept:
        break;
    }
    return {};
}

// Span `index` of a span corruption; next-sentence prediction's sentences A and B take the first two.
inline QColor spanColor(size_t index)
{
    return palette::spanFills[index % std::size(palette::spanFills)];
}

} // namespace atlas
