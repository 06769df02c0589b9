#pragma once

#include <cstdint>
#include <functional>

namespace atlas {

// Splits [0, n) into one contiguous chunk per core and runs `body(begin, end)` on them on all cores, when there is
// at least `grain` work per thread; otherwise runs inline. The threads wait, asleep, between loops (a pool), so
// they do not compete with OpenBLAS's own threads. A parallelFor inside a body runs inline; OpenBLAS runs
// single-threaded while a body runs. An exception thrown by a body is rethrown after every thread has finished.
void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &body);

// The same, but the threads take pieces of `piece` indices in turn until none is left, so that a thread that
// was held up (by the scheduler, or by harder pieces) is made up for by the others. For loops whose pieces write
// disjoint outputs: which thread runs a piece, and how often a thread's body is called, varies from run to run.
void parallelForPieces(int64_t n, int64_t piece, const std::function<void(int64_t, int64_t)> &body);

// Threads parallelFor uses (the machine's cores).
int workerThreads();

} // namespace atlas
