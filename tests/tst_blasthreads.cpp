// Behaviour on a busy machine. OpenBLAS gets as many threads as there are idle cores (util/blasthreads.h): a busy
// machine gets one thread, not two that wait for each other. The app's background threads run nicer than its
// window's thread (util/threadpriority.h), and so do the threads they start.
#include "util/blasthreads.h"
#include "util/parallel.h"
#include "util/threadpriority.h"

#include <QTest>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

using namespace atlas;

class TestBlasThreads : public QObject
{
    Q_OBJECT

private slots:
    void threadsFollowTheIdleCores()
    {
        QCOMPARE(blasThreadsFor(2, 0), 2); // an idle machine: every core
        QCOMPARE(blasThreadsFor(2, 1), 1); // one other runnable process on two cores
        QCOMPARE(blasThreadsFor(2, 2), 1); // the case measured in docs/benchmarks.md
        QCOMPARE(blasThreadsFor(2, 40), 1); // never fewer than one
        QCOMPARE(blasThreadsFor(8, 3), 5);
        QCOMPARE(blasThreadsFor(1, 0), 1);
        QCOMPARE(blasThreadsFor(4, -1), 4); // an unknown load counts as idle
    }

    void adaptingIsSafeToCallOften()
    {
        for (int i = 0; i < 10000; ++i)
            adaptBlasThreadsToLoad(); // sampled at most every 200 ms: no cost worth measuring
    }

#ifdef __linux__
    void backgroundThreadsAndTheThreadsTheyStartRunNicer()
    {
        const int window = currentThreadNiceness();
        std::vector<int> seen(4, -100);
        int background = -100;
        std::thread job([&] {
            runAtBackgroundPriority();
            background = currentThreadNiceness();
            // parallelFor starts a thread per core beyond this one: each reports its own value.
            parallelFor(int64_t(seen.size()), 1, [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i)
                    seen[size_t(i)] = currentThreadNiceness();
            });
        });
        job.join();
        QVERIFY(background >= backgroundNiceness);
        for (int n : seen)
            QVERIFY2(n >= backgroundNiceness, qPrintable(QString::number(n)));
        QCOMPARE(currentThreadNiceness(), window); // the calling thread is left alone
    }

    void threadsThatExistAlreadyAreLowered()
    {
        const int window = currentThreadNiceness();
        std::mutex mutex;
        std::condition_variable wake;
        bool go = false;
        int before = -100, after = -100;
        std::thread started([&] { // stands for OpenBLAS's workers, started before the app's main()
            std::unique_lock lock(mutex);
            before = currentThreadNiceness();
            wake.wait(lock, [&] { return go; });
            after = currentThreadNiceness();
        });
        while (true) { // until it has read its value
            std::this_thread::yield();
            const std::lock_guard lock(mutex);
            if (before != -100)
                break;
        }
        lowerThreadsStartedSoFar();
        {
            const std::lock_guard lock(mutex);
            go = true;
        }
        wake.notify_one();
        started.join();
        QCOMPARE(before, window);
        QVERIFY(after >= backgroundNiceness);
        QCOMPARE(currentThreadNiceness(), window);
    }
#endif
};

QTEST_GUILESS_MAIN(TestBlasThreads)
#include "tst_blasthreads.moc"
