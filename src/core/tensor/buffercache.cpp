#include "tensor/buffercache.h"

#include "tensor/backgroundfree.h"
#include "util/sanitizers.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <new>
#include <utility>

#ifdef ATLAS_ADDRESS_SANITIZER
#define ATLAS_KEEP_BUFFERS 0
#else
#define ATLAS_KEEP_BUFFERS 1
#endif

namespace atlas {
namespace {

constexpr std::align_val_t kAlignment {64};

struct Kept
{
    size_t bytes;
    void *p;
};

class BufferCache
{
public:
    void *take(size_t bytes)
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        for (auto it = m_kept.rbegin(); it != m_kept.rend(); ++it) // the most recently kept: still in cache
            if (it->bytes == bytes) {
                void *p = it->p;
                m_bytes -= bytes;
                m_kept.erase(std::next(it).base());
                return p;
            }
        return nullptr;
    }

    // Keeps p; returns the buffers that no longer fit, oldest first, for the caller to free.
    std::deque<Kept> keep(void *p, size_t bytes)
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_kept.push_back({bytes, p});
        m_bytes += bytes;
        std::deque<Kept> evicted;
        while (m_bytes > kCachedBufferBytes) {
            evicted.push_back(m_kept.front());
            m_bytes -= m_kept.front().bytes;
            m_kept.pop_front();
        }
        return evicted;
    }

    std::deque<Kept> takeAll()
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_bytes = 0;
        return std::exchange(m_kept, {});
    }

    size_t bytes()
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        return m_bytes;
    }

private:
    std::mutex m_mutex;
    std::deque<Kept> m_kept; // oldest first
    size_t m_bytes = 0;
};

// Never destroyed: a tensor may be freed during static destruction.
BufferCache &cache()
{
    static BufferCache *c = new BufferCache;
    return *c;
}

bool keptSize(size_t bytes)
{
    return ATLAS_KEEP_BUFFERS && bytes >= kCachedBufferMinBytes && bytes < kCachedBufferMaxBytes;
}

void release(void *p, size_t bytes)
{
    if (bytes >= kBackgroundFreeBytes && freesLargeBuffersInBackground())
        freeInBackground(p, kAlignment);
    else
        ::operator delete(p, kAlignment);
}

} // namespace

void *allocateTensorBuffer(size_t bytes)
{
    if (keptSize(bytes))
        if (void *p = cache().take(bytes))
            return p;
    void *p = ::operator new(bytes, kAlignment);
    // Above the kept sizes (and above glibc's largest mmap threshold, 32 MiB) every buffer is new pages: in 2 MB
    // pages, a 311 MB buffer (Qwen2.5-0.5B's logits at 512 tokens) is first touched in tens of milliseconds rather
    // than about 0.9 s (docs/benchmarks.md).
    if (bytes >= kCachedBufferMaxBytes)
        adviseHugePages(p, bytes);
    return p;
}

void freeTensorBuffer(void *p, size_t bytes)
{
    if (!keptSize(bytes)) {
        release(p, bytes);
        return;
    }
    for (const Kept &old : cache().keep(p, bytes))
        release(old.p, old.bytes);
}

bool keepsTensorBuffers()
{
    return ATLAS_KEEP_BUFFERS;
}

size_t cachedTensorBufferBytes()
{
    return cache().bytes();
}

void releaseCachedTensorBuffers()
{
    for (const Kept &old : cache().takeAll())
        release(old.p, old.bytes);
}

ScratchFloats::ScratchFloats(int64_t floats)
    : m_bytes(size_t(std::max<int64_t>(floats, 16)) * sizeof(float))
    , m_data(static_cast<float *>(allocateTensorBuffer(m_bytes)))
{
}

} // namespace atlas
