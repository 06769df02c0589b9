#include "util/parallel.h"

#include "util/blasthreads.h"
#include "util/threadpriority.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
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

std::atomic<int> g_steadyHolders {0}; // SteadyBlasThreads alive

// Whether the user set OpenBLAS's thread count: then nothing here changes it.
bool userChoseBlasThreads()
{
    static const bool chose = std::getenv("OPENBLAS_NUM_THREADS") != nullptr;
    return chose;
}

} // namespace

SteadyBlasThreads::SteadyBlasThreads()
{
    if (g_steadyHolders++ == 0 && !userChoseBlasThreads())
        SingleThreadedBlas::setThreads(workerThreads());
}

SteadyBlasThreads::~SteadyBlasThreads()
{
    --g_steadyHolders;
}

int blasThreadsFor(int cores, int othersRunnable)
{
    return std::clamp(cores - std::max(0, othersRunnable), 1, std::max(1, cores));
}

void adaptBlasThreadsToLoad()
{
#ifdef ATLAS_OPENBLAS
    if (userChoseBlasThreads() || g_steadyHolders.load() > 0)
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

namespace {

// Threads that wait, asleep, for the next parallel loop. Starting threads per loop cost about 70 µs a loop on the
// benchmark machine, and a loop whose thread was late to start waited for it; waking a waiting thread costs
// about 25 µs. One loop at a time: a second caller meanwhile runs its loop on its own thread. One pool per nice
// value of the callers (util/threadpriority.h), made by the first caller of that value, so that its threads
// inherit it: background work stays background work. Never destroyed, so that a loop during the process's exit
// still finds its pool.
class WorkerPool
{
public:
    static WorkerPool &forThisThread()
    {
        static std::mutex mutex;
        static auto *pools = new std::map<int, WorkerPool *>;
        const std::lock_guard<std::mutex> lock(mutex);
        WorkerPool *&pool = (*pools)[currentThreadNiceness()];
        if (!pool)
            pool = new WorkerPool(workerThreads() - 1);
        return *pool;
    }

    // Runs work(0) on the calling thread and work(1) … work(threads − 1) on the pool's threads, and returns when
    // all have finished; false, having run nothing, when another caller's loop is running.
    bool run(int threads, const std::function<void(int)> &work)
    {
        const std::unique_lock<std::mutex> caller(m_caller, std::try_to_lock);
        if (!caller.owns_lock())
            return false;
        const int helpers = std::min(threads - 1, int(m_threads.size()));
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_work = &work;
            m_wanted = helpers;
            m_pending = helpers;
            ++m_generation;
        }
        m_wake.notify_all();
        work(0);
        for (int t = helpers + 1; t < threads; ++t) // more than the pool has threads: the caller runs the rest
            work(t);
        std::unique_lock<std::mutex> lock(m_mutex);
        m_done.wait(lock, [&] { return m_pending == 0; });
        m_work = nullptr;
        return true;
    }

private:
    explicit WorkerPool(int threads)
    {
        for (int t = 1; t <= threads; ++t)
            m_threads.emplace_back([this, t] { serve(t); });
    }

    void serve(int index)
    {
        int64_t seen = 0;
        std::unique_lock<std::mutex> lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [&] { return m_generation != seen; });
            seen = m_generation;
            if (index > m_wanted)
                continue;
            const std::function<void(int)> &work = *m_work;
            lock.unlock();
            work(index);
            lock.lock();
            if (--m_pending == 0)
                m_done.notify_one();
        }
    }

    std::mutex m_caller; // held by the loop running
    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::vector<std::thread> m_threads;
    const std::function<void(int)> *m_work = nullptr;
    int64_t m_generation = 0;
    int m_wanted = 0, m_pending = 0;
};

// Runs work(t) for t in [0, threads) on the pool, or all of them on this thread when the pool is busy; the first
// exception of any is rethrown once all have finished.
void runOnCores(int threads, const std::function<void(int)> &work)
{
    const SingleThreadedBlas blas;
    std::exception_ptr failure;
    std::mutex failureMutex;
    const std::function<void(int)> guarded = [&](int t) {
        const bool nested = t_insideParallelFor;
        t_insideParallelFor = true;
        try {
            work(t);
        } catch (...) {
            const std::lock_guard<std::mutex> lock(failureMutex);
            if (!failure)
                failure = std::current_exception();
        }
        t_insideParallelFor = nested;
    };
    if (!WorkerPool::forThisThread().run(threads, guarded))
        for (int t = 0; t < threads; ++t)
            guarded(t);
    if (failure)
        std::rethrow_exception(failure);
}

int64_t threadsFor(int64_t n, int64_t grain)
{
    return t_insideParallelFor ? 1 : std::min<int64_t>(workerThreads(), grain > 0 ? n / grain : n);
}

} // namespace

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &body)
{
    const int64_t threads = threadsFor(n, grain);
    if (threads <= 1) {
        if (n > 0)
            body(0, n);
        return;
    }
    const int64_t chunk = (n + threads - 1) / threads;
    runOnCores(int(threads), [&](int t) {
        const int64_t begin = t * chunk, end = std::min(n, begin + chunk);
        if (begin < end)
            body(begin, end);
    });
}

void parallelForPieces(int64_t n, int64_t piece, const std::function<void(int64_t, int64_t)> &body)
{
    piece = std::max<int64_t>(1, piece);
    const int64_t threads = threadsFor(n, piece);
    if (threads <= 1) {
        if (n > 0)
            body(0, n);
        return;
    }
    std::atomic<int64_t> next {0};
    runOnCores(int(threads), [&](int) {
        for (int64_t begin = next.fetch_add(piece); begin < n; begin = next.fetch_add(piece))
            body(begin, std::min(n, begin + piece));
    });
}

} // namespace atlas
