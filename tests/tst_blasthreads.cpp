// OpenBLAS gets as many threads as there are idle cores (util/blasthreads.h): a busy machine gets one thread, not
// two that wait for each other.
#include "util/blasthreads.h"

#include <QTest>

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
};

QTEST_GUILESS_MAIN(TestBlasThreads)
#include "tst_blasthreads.moc"
