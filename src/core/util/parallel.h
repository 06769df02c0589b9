#pragma once

#include <cstdint>
#include <functional>

namespace atlas {

// Splits [0, n) into contiguous chunks and runs `body(begin, end)` on them on all cores, when there is at
// least `grain` work per thread; otherwise runs inline. Threads are started per call (tens of microseconds)
// and never spin while idle, so they do not compete with OpenBLAS's own threads between calls. A parallelFor
// inside a body runs inline; OpenBLAS runs single-threaded while a body runs. An exception thrown by a body
// is rethrown after every thread has finished.
void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &body);

// Threads parallelFor uses (the machine's cores).
int workerThreads();

} // namespace atlas
