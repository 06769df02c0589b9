#include "util/parallel.h"

#include "util/blasthreads.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <string>
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

    // Sets OpenBLAS's thread count now, or when the last holder lets go.
    static void setThreads(int threads)
    {
#ifdef ATLAS_OPENBLAS
        const std::lock_guard<std::mutex> lock(s_mutex);
        if (s_holders > 0)
            s_savedThreads = threads;
        else if (openblas_get_num_threads() != threads)
            openblas_set_num_threads(threads);
#else
        (void)threads;
#endif
    }

private:
    static inline std::mutex s_mutex;
    static inline int s_holders = 0;
    static inline int s_savedThreads = 1;
};

// Runnable processes on the machine, this one's running thread included (procs_running); -1 when unknown.
int runnableProcesses()
{
    std::ifstream stat("/proc/stat");
    std::string key;
    int value = -1;
    while (stat >> key) {
        if (key == "procs_running") {
            stat >> value;
            return value;
        }
        stat.ignore(1 << 16, '\n');
    }
    return -1;
}

} // namespace

int blasThreadsFor(int cores, int othersRunnable)
{
    return std::clamp(cores - std::max(0, othersRunnable), 1, std::max(1, cores));
}

void adaptBlasThreadsToLoad()
{
#ifdef ATLAS_OPENBLAS
    static const bool userChose = std::getenv("OPENBLAS_NUM_THREADS") != nullptr;
    if (userChose)
        return;
    static std::atomic<int64_t> lastSample {0};
    const int64_t now
        = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
              .count();
    int64_t last = lastSample.load();
    if (now - last < 200 || !lastSample.compare_exchange_strong(last, now))
        return;
    const int running = runnableProcesses();
    if (running < 1)
        return;
    SingleThreadedBlas::setThreads(blasThreadsFor(workerThreads(), running - 1));
#endif
}

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
