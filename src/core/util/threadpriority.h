#pragma once

namespace atlas {

// The app's window must answer within 100 ms while the engine keeps both cores busy. Linux gives each thread its
// own nice value, so background work runs a few steps nicer than the window's thread and the scheduler hands the
// window a core as soon as it has something to do; the work loses only the moments the window uses. Threads a
// lowered thread starts inherit its value, and parallelFor's
// threads run at their caller's (a pool of threads per value). The command line keeps normal priority throughout.

// How much nicer background threads run than the window's thread.
inline constexpr int backgroundNiceness = 5;

// Lowers the calling thread to background priority (once; later calls do nothing). No-op off Linux.
void runAtBackgroundPriority();

// Lowers every other thread of the process that exists now: called first thing in the app, these are OpenBLAS's
// workers, started when the library loaded. No-op off Linux.
void lowerThreadsStartedSoFar();

// Turns both functions above into no-ops from now on: bench-gui's `--same-priority`, to measure the difference.
void disableBackgroundPriority();

// The calling thread's nice value (0 when unknown): for tests and diagnostics.
int currentThreadNiceness();

} // namespace atlas
