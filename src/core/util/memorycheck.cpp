#include "util/memorycheck.h"

#include "util/error.h"
#include "util/text.h"

#include <cmath>
#include <cstdio>

#include <malloc.h>
#include <unistd.h>

namespace atlas {

std::string formatBytes(double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    const auto [value, unit] = scaledToUnit(bytes, 1024, 7);
    bytes = value;
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

std::string overMachineMemory(double bytes)
{
    const double available = physicalMemoryBytes();
    if (available > 0 && !(bytes <= available)) // also refuses a NaN estimate
        return "more than this machine's " + formatBytes(available) + " of memory";
    return {};
}

void checkFitsInMemory(double bytes, const std::string &what)
{
    if (const std::string over = overMachineMemory(bytes); !over.empty())
        throw Error(what + " needs about " + formatBytes(bytes) + ", " + over);
}

void reuseFreedTensorMemory()
{
    mallopt(M_ARENA_MAX, 1); // the worker threads' tensors too: another arena's heaps stop at 64 MiB
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

} // namespace atlas
