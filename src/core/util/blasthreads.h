#pragma once

namespace atlas {

// How many threads OpenBLAS may use for the next products, from how busy the machine is.
//
// OpenBLAS splits a product over its threads, and they wait for each other at its end by spinning. When other
// processes keep the cores busy, one descheduled thread holds up the rest: on this 2-core machine with other
// CPU-bound work, 3000 KV-cache generation steps took 38 s with two OpenBLAS threads and 1.4 s with one, and a
// GPT-2-small forward pass 3.5 s against 1.4 s (docs/benchmarks.md). So each product gets as many threads as
// there are idle cores, at least one.
//
// The number of runnable processes other than this one (Linux's procs_running in /proc/stat, minus one) is
// sampled at most every 200 ms, by the engine before each operation and the generator before each token. A user
// who sets OPENBLAS_NUM_THREADS keeps that choice.

// The policy: cores minus the other runnable processes, within [1, cores].
int blasThreadsFor(int cores, int othersRunnable);

// Samples the load (at most every 200 ms) and sets OpenBLAS's thread count by blasThreadsFor. Does nothing in
// the Eigen build, when OPENBLAS_NUM_THREADS is set, and while parallelFor holds OpenBLAS at one thread (the
// count is then applied when it lets go). Thread-safe.
void adaptBlasThreadsToLoad();

} // namespace atlas
