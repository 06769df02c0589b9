#pragma once

#include <string>

// Refusing work that cannot fit before memory is spent on it (docs/reliability.md): callers estimate the bytes a
// request implies from its shape, and a request over this machine's memory fails at once, with the figure.
namespace atlas {

// "512 B", "3.00 KiB", "12.5 MiB", "1.50 GiB", "2.00 TiB": the one byte formatter of the core and the CLI.
std::string formatBytes(double bytes);

// The machine's physical memory in bytes (sysconf), or 0 when the system does not say.
double physicalMemoryBytes();

// "" when `bytes` fits in this machine's memory (or it does not say how much it has), else "more than this
// machine's 23.4 GiB of memory": the one test of an estimate against the machine, here and in overBudget.
std::string overMachineMemory(double bytes);

// Throws atlas::Error "<what> needs about 96.0 GiB, more than this machine's 23.4 GiB of memory" when `bytes` is
// over the physical memory. `what` names the request and, where it helps, the option to change.
void checkFitsInMemory(double bytes, const std::string &what);

// Every operation allocates its output tensors and frees its inputs' when they are no longer read: megabytes each, many
// times per forward pass. glibc hands allocations over its threshold (32 MiB at most by default, and only in the main
// thread's arena) to the kernel, which maps fresh zeroed pages for the next one: a page fault per 4 KiB. This keeps
// tensors under 64 MiB in one heap whose freed memory (up to 1 GiB at its top) is reused instead: a Llama forward at
// 512 tokens runs a fifth faster (docs/benchmarks.md). Larger ones are mapped and given back whole (in 2 MB pages,
// tensor/buffercache.h): in the heap, the tensors a checkpointed trace keeps were placed in the holes its freed
// [T, F] activations left, and each block's next ones took new memory, 11.4 GB resident for a 4.1 GiB trace at 8192
// tokens. Called once, first thing in main.
void reuseFreedTensorMemory();

} // namespace atlas
