#pragma once

#include <QString>

// Byte counts as the memory views print them: KiB below a MiB, MiB above, two decimals below 100.
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

// "3.00 MiB", "192 KiB"
inline QString byteAmount(double bytes)
{
    const ByteUnit u = byteUnitFor(bytes);
    return QString::number(bytes / u.divisor, 'f', bytes / u.divisor >= 100 ? 0 : 2) + QLatin1Char(' ') + u.name;
}

} // namespace atlas
