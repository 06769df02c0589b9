#pragma once

#include "util/memorycheck.h"

#include <QString>

// Byte counts as the memory views print them. Axes: KiB below a MiB, MiB above.
namespace atlas {

constexpr double kMiB = 1 << 20;

struct ByteUnit
{
    double divisor;
    QString name;
};

inline ByteUnit byteUnitFor(double bytes)
{
    if (bytes >= kMiB)
        return {kMiB, QStringLiteral("MiB")};
    return {1024.0, QStringLiteral("KiB")};
}

// "3.00 MiB", "192 KiB", "512 B": the core's one byte formatter (util/memorycheck.h), as the CLI prints them.
inline QString byteAmount(double bytes)
{
    return QString::fromStdString(formatBytes(bytes));
}

} // namespace atlas
