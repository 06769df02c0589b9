#include "util/parallel.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#ifdef ATLAS_OPENBLAS
extern "C" {
void openblas_set_num_threads(int threads);
int openblas_get_num_threads(void);
}
#endif

namespace atlas {

namespace {

// True on a thread that is running a parallelFor body: a nested parallelFor then runs inline, since every core
// already has work.
thread_local bool t_insideParallelFor = false;

// OpenBLAS (pthreads build) splits every product over its own threads. While parallelFor's threads each call it,
// its threads and ours oversubscribe the cores and OpenBLAS's waiting threads spin in sched_yield: a training
// step of the character model ran 3× slower (docs/benchmarks.md). So OpenBLAS runs single-threaded while any
// parallelFor is in flight, in any thread of the process.
class SingleThreadedBlas
{
public:
    SingleThreadedBlas()
    {
#ifdef ATLAS_OPENBLAS
        const std::lock_guard<std::mutex> lock(s_mutex);
        if (s_holders++ == 0) {
            s_savedThreads = openblas_get_num_threads();
            openblas_set_num_threads(1);
        }
#endif
    }
    ~SingleThreadedBlas()
    {
#ifdef ATLAS_OPENBLAS
        const std::lock_guard<std::mutex> lock(s_mutex);
        if (--s_holders == 0)
            openblas_set_num_threads(s_savedThreads);
#endif
    }
    SingleThreadedBlas(const SingleThreadedBlas &) = delete;
    SingleThreadedBlas &operator=(const SingleThreadedBlas &) = delete;

private:
    static inline std::mutex s_mutex;
    static inline int s_holders = 0;
    static inline int s_savedThreads = 1;
};

} // namespace

int workerThreads()
{
    static const int n = std::max(1u, std::thread::hardware_concurrency());
    return n;
}

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &body)
{
    const int64_t threads = t_insideParallelFor ? 1 : std::min<int64_t>(workerThreads(), grain > 0 ? n / grain : n);
    if (threads <= 1) {
        if (n > 0)
            body(0, n);
        return;
    }
    const SingleThreadedBlas blas;
    std::exception_ptr failure; // the first exception of any chunk, rethrown once every thread has joined
    std::mutex failureMutex;
    const auto run = [&](int64_t begin, int64_t end) {
        t_insideParallelFor = true;
        try {
            body(begin, end);
        } catch (...) {
            const std::lock_guard<std::mutex> lock(failureMutex);
            if (!failure)
                failure = std::current_exception();
        }
        t_insideParallelFor = false;
    };
    std::vector<std::thread> pool;
    const int64_t chunk = (n + threads - 1) / threads;
    for (int64_t t = 1; t < threads; ++t)
        pool.emplace_back([&, t] { run(t * chunk, std::min(n, (t + 1) * chunk)); });
    run(0, std::min(n, chunk));
    for (std::thread &th : pool)
        th.join();
    if (failure)
        std::rethrow_exception(failure);
}

} // namespace atlas
