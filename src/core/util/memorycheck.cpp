#include "util/memorycheck.h"

#include "util/error.h"

#include <cmath>
#include <cstdio>

#include <unistd.h>

namespace atlas {

std::string formatBytes(double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int unit = 0;
    while (std::fabs(bytes) >= 1024 && unit < 6) {
        bytes /= 1024;
        ++unit;
    }
    char text[48];
    if (unit == 0)
        std::snprintf(text, sizeof text, "%.0f B", bytes);
    else
        std::snprintf(text, sizeof text, std::fabs(bytes) >= 100 ? "%.0f %s" : "%.2f %s", bytes, units[unit]);
    return text;
}

double physicalMemoryBytes()
{
    const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && pageSize > 0 ? double(pages) * double(pageSize) : 0.0;
}

void checkFitsInMemory(double bytes, const std::string &what)
{
    const double available = physicalMemoryBytes();
    if (available > 0 && !(bytes <= available)) // also refuses a NaN estimate
        throw Error(what + " needs about " + formatBytes(bytes) + ", more than this machine's " + formatBytes(available)
            + " of memory");
}

} // namespace atlas
