#pragma once

#include "train/memorystrategy.h"
#include "views/palette.h"

#include <QColor>

// One colour per memory strategy, the same in every memory view.
namespace atlas {

inline constexpr MemoryStrategy kMemoryStrategies[]
    = {MemoryStrategy::Plain, MemoryStrategy::Checkpoint, MemoryStrategy::Reversible};

inline QColor strategyColor(MemoryStrategy strategy, bool dark)
{
    const QColor color = strategy == MemoryStrategy::Plain ? palette::tableauBlue
        : strategy == MemoryStrategy::Checkpoint           ? palette::tableauOrange
                                                           : palette::tableauGreen;
    return dark ? color.lighter(125) : color;
}

} // namespace atlas
