#pragma once

#include <cstddef>
#include <cstdint>

namespace atlas {

// Tensor buffers of kCachedBufferMinBytes up to kCachedBufferMaxBytes are kept when freed and handed out again for a
// buffer of the same size. The engine allocates the same sizes over and over (every layer of a forward pass, every
// call of an attention kernel), and the heap alone did not give them back reliably: a smaller allocation carved up
// the memory just freed, the next buffer of that size went to new pages, and on the benchmark machine (a virtual
// machine) a page costs about 11 µs when first touched, so the same kernel took 15 ms one call and 27 ms the next
// (docs/benchmarks.md). At most kCachedBufferBytes stay kept, the oldest given back first. Off under the address
// sanitizer, which must see every buffer freed.
constexpr size_t kCachedBufferMinBytes = size_t(64) << 10;
constexpr size_t kCachedBufferMaxBytes = size_t(64) << 20; // exclusive
constexpr size_t kCachedBufferBytes = size_t(256) << 20;

// ::operator new(bytes, 64-byte alignment), or a kept buffer of exactly `bytes`.
void *allocateTensorBuffer(size_t bytes);
// Keeps the buffer, or frees it: on the background thread when the calling thread asked for that
// (setFreeLargeBuffersInBackground) and it is large, otherwise at once. A buffer evicted to make room is freed the
// same way.
void freeTensorBuffer(void *p, size_t bytes);
// A float buffer of at least `floats` values from allocateTensorBuffer, uninitialized, given back when it goes: a
// kernel's scratch (packed panels, a decoded tile of weights), which would otherwise come from new pages each call,
// at about 11 µs a page first touched on the benchmark machine.
class ScratchFloats
{
public:
    explicit ScratchFloats(int64_t floats);
    ~ScratchFloats() { freeTensorBuffer(m_data, m_bytes); }
    ScratchFloats(const ScratchFloats &) = delete;
    ScratchFloats &operator=(const ScratchFloats &) = delete;
    float *data() { return m_data; }

private:
    size_t m_bytes;
    float *m_data;
};
// Whether buffers are kept in this build (not under the address sanitizer).
bool keepsTensorBuffers();
// The bytes kept now; gives every kept buffer back to the heap.
size_t cachedTensorBufferBytes();
void releaseCachedTensorBuffers();

} // namespace atlas
