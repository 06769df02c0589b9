#include "tensor/backgroundfree.h"

#include "util/pageadvice.h"

#include <sys/mman.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace atlas {
namespace {

thread_local bool t_inBackground = false;

class Releaser
{
public:
    Releaser()
        : m_thread([this] { run(); })
    {
        m_thread.detach(); // lives as long as the process: a buffer may be freed during static destruction
    }

    void push(void *p, std::align_val_t alignment)
    {
        {
            const std::lock_guard lock(m_mutex);
            m_queue.emplace_back(p, alignment);
            ++m_pending;
            ++m_total;
        }
        m_wake.notify_one();
    }

    size_t pending()
    {
        const std::lock_guard lock(m_mutex);
        return m_pending;
    }

    size_t total()
    {
        const std::lock_guard lock(m_mutex);
        return m_total;
    }

private:
    void run()
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [this] { return !m_queue.empty(); });
            const auto [p, alignment] = m_queue.front();
            m_queue.pop_front();
            lock.unlock();
            ::operator delete(p, alignment);
            lock.lock();
            --m_pending;
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::pair<void *, std::align_val_t>> m_queue;
    size_t m_pending = 0;
    size_t m_total = 0;
    std::thread m_thread;
};

Releaser &releaser()
{
    static Releaser *instance = new Releaser; // never destroyed, like its thread
    return *instance;
}

} // namespace

void setFreeLargeBuffersInBackground(bool on)
{
    t_inBackground = on;
}

bool freesLargeBuffersInBackground()
{
    return t_inBackground;
}

void freeInBackground(void *p, std::align_val_t alignment)
{
    releaser().push(p, alignment);
}

size_t backgroundFreesPending()
{
    return releaser().pending();
}

size_t backgroundFreesTotal()
{
    return releaser().total();
}

void adviseHugePages(void *p, size_t bytes)
{
    adviseWholePages(p, bytes, size_t(2) << 20, MADV_HUGEPAGE);
}

} // namespace atlas
