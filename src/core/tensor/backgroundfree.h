#pragma once

#include <cstddef>
#include <new>

namespace atlas {

// Freeing a buffer of hundreds of MB (a trace's T×T attention at thousands of tokens) returns its pages to the
// system, which takes tens of ms per GB in munmap. A thread that must stay responsive (the window's) asks for
// its large frees to be done by a background thread instead; every other thread frees as before, so the
// engine's peak memory is unchanged.
constexpr size_t kBackgroundFreeBytes = size_t(16) << 20;

// Whether the calling thread hands frees of at least kBackgroundFreeBytes to the background thread.
void setFreeLargeBuffersInBackground(bool on);
bool freesLargeBuffersInBackground();

// Frees `p` (from ::operator new(bytes, alignment)) on the background thread, soon.
void freeInBackground(void *p, std::align_val_t alignment);
// Buffers handed over and not yet freed; buffers handed over since the process started.
size_t backgroundFreesPending();
size_t backgroundFreesTotal();

// A checkpoint's tensor of at least this size asks for transparent huge pages (Tensor::uninitialized): touching it for
// the first time then takes one fault per 2 MB instead of one per 4 kB (a model's float32 weights, 2 GB for
// Qwen2.5-0.5B, are half a million faults otherwise; docs/benchmarks.md). Not every large buffer: the forward pass
// reuses freed heap memory (util/memorycheck.h), where the advice measured a little slower; but every buffer too
// large to be kept for reuse (tensor/buffercache.h) is new pages, and asks for them.
constexpr size_t kHugePageAdviceBytes = size_t(8) << 20;
// madvise(MADV_HUGEPAGE) over the 2 MB-aligned pages inside [p, p + bytes); does nothing where the system says no.
void adviseHugePages(void *p, size_t bytes);

} // namespace atlas
