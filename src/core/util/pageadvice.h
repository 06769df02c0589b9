#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace atlas {

// madvise(advice) over the pages of `pageBytes` that lie wholly inside [p, p + bytes): none when the range holds no
// whole page. Advice is a hint: where the system refuses it, nothing changes.
inline void adviseWholePages(const void *p, size_t bytes, size_t pageBytes, int advice)
{
    const uintptr_t first = (uintptr_t(p) + pageBytes - 1) / pageBytes * pageBytes;
    const uintptr_t end = (uintptr_t(p) + bytes) / pageBytes * pageBytes;
    if (end > first)
        ::madvise(reinterpret_cast<void *>(first), end - first, advice);
}

} // namespace atlas
