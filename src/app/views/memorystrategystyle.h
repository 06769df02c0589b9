#pragma once

#include "train/memorystrategy.h"

#include <QColor>

// One colour per memory strategy, the same in every memory view.
namespace atlas {

inline constexpr MemoryStrategy kMemoryStrategies[]
    = {MemoryStrategy::Plain, MemoryStrategy::Checkpoint, MemoryStrategy::Reversible};

inline QColor strategyColor(MemoryStrategy strategy, bool dark)
{
    const QColor color = strategy == MemoryStrategy::Plain ? QColor(0x4e79a7)
        : strategy == MemoryStrategy::Checkpoint           ? QColor(0xf28e2b)
                                                           : QColor(0x59a14f);
    return dark ? color.lighter(125) : color;
}

} // namespace atlas
