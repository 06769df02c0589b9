#include "util/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace atlas {

int workerThreads()
{
    static const int n = std::max(1u, std::thread::hardware_concurrency());
    return n;
}

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &body)
{
    const int64_t threads = std::min<int64_t>(workerThreads(), grain > 0 ? n / grain : n);
    if (threads <= 1) {
        if (n > 0)
            body(0, n);
        return;
    }
    std::vector<std::thread> pool;
    const int64_t chunk = (n + threads - 1) / threads;
    for (int64_t t = 1; t < threads; ++t)
        pool.emplace_back([&, t] { body(t * chunk, std::min(n, (t + 1) * chunk)); });
    body(0, std::min(n, chunk));
    for (std::thread &th : pool)
        th.join();
}

} // namespace atlas
