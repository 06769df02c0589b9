#pragma once

#include <string>

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

// While one is alive, OpenBLAS keeps as many threads as there are cores, whatever the load, and
// adaptBlasThreadsToLoad leaves it so: for a run whose bits must not depend on when the load was sampled. OpenBLAS
// does not sum every product in the same order on one thread as on two (measured: a sparse autoencoder's training
// stopped at step 20 and resumed gave other losses than the same run straight through, while the machine's load made
// the count go between one and two). OPENBLAS_NUM_THREADS, set by the user, wins as always.
class SteadyBlasThreads
{
public:
    SteadyBlasThreads();
    ~SteadyBlasThreads();
    SteadyBlasThreads(const SteadyBlasThreads &) = delete;
    SteadyBlasThreads &operator=(const SteadyBlasThreads &) = delete;
};

// How long OpenBLAS's threads spin, asking the scheduler to run something else (sched_yield), before they sleep
// when a product has ended: 2^kBlasSpinExponent cycles, about 25 µs here, against OpenBLAS's 2^28, about 0.1 s.
// On these two cores the engine's own loops and its next operations had a spinning thread beside them: a
// GPT-2-small forward took 290–320 ms (some runs 210) and a training step's backward 780–910 ms; with the short
// spin, 222 and 445 ms (docs/benchmarks.md).
inline constexpr int kBlasSpinExponent = 16;

// OpenBLAS reads OPENBLAS_THREAD_TIMEOUT once, as it loads, before main() and before anything main() could set
// (an environment set in a .preinit_array function is replaced by the C library's own start). So main() calls
// this first: unless the variable is set (by the user, or by this), it sets it to kBlasSpinExponent and starts
// the program again (execv of the file /proc/self/exe links to, about 50 ms), which then returns at once. Does nothing
// in the Eigen build or under the address sanitizer; if the restart fails the program goes on with OpenBLAS's default.
// It also sets OPENBLAS_CORETYPE, unless the user did, when OpenBLAS chose kernels for a processor without AVX2 on one
// with AVX-512 or AVX2 (betterBlasKernels).
void startWithShortBlasSpin(char **argv);

// SkylakeX or Haswell when OpenBLAS runs the kernels of a processor without AVX2 (its fallback for one it does not
// recognise: this session's virtual "Intel Xeon Processor" got Prescott's SSE3 kernels) and this one has AVX-512
// or AVX2 with FMA; else null. Qwen2.5-0.5B's traced forward at 128 tokens took 4.1 s with Prescott's kernels and
// 0.99 s with SkylakeX's (docs/benchmarks.md).
const char *betterBlasKernels();
// The exponent OpenBLAS read (openblas_thread_timeout), or -1 in the Eigen build.
int blasSpinExponent();
// The kernels OpenBLAS runs ("Haswell", "Cooperlake", ...): its choice for the CPU, or OPENBLAS_CORETYPE's. ""
// in the Eigen build.
std::string blasKernels();
// What does the matrix products, for the benchmarks' headers: "OpenBLAS (SkylakeX kernels, threads spin 2^16
// cycles)", or "Eigen".
std::string matrixProductsDescription();

} // namespace atlas
