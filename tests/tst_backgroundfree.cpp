// A thread that asks for it has its large tensor buffers freed by the background thread; small ones, and every
// other thread's, are freed at once.
#include "tensor/backgroundfree.h"
#include "tensor/tensor.h"

#include <QTest>

#include <thread>

using namespace atlas;

class TestBackgroundFree : public QObject
{
    Q_OBJECT

private slots:
    void largeBuffersGoToTheBackgroundThread()
    {
        const int64_t large = int64_t(kBackgroundFreeBytes / sizeof(float)) + 1;
        QVERIFY(!freesLargeBuffersInBackground()); // off unless asked
        const size_t before = backgroundFreesTotal();
        {
            Tensor t({large});
        }
        QCOMPARE(backgroundFreesTotal(), before);

        setFreeLargeBuffersInBackground(true);
        QVERIFY(freesLargeBuffersInBackground());
        std::thread([] { QVERIFY(!freesLargeBuffersInBackground()); }).join(); // per thread
        {
            Tensor small({1000});
            Tensor big({large}, 1.5f);
            QCOMPARE(big.data()[large - 1], 1.5f);
        }
        QCOMPARE(backgroundFreesTotal(), before + 1); // the big one, never the small one
        QTRY_COMPARE_WITH_TIMEOUT(backgroundFreesPending(), size_t(0), 10000);
        for (int i = 0; i < 20; ++i) // many in a row, as a long trace's tensors
            Tensor t({large});
        QCOMPARE(backgroundFreesTotal(), before + 21);
        QTRY_COMPARE_WITH_TIMEOUT(backgroundFreesPending(), size_t(0), 10000);
        setFreeLargeBuffersInBackground(false);
        {
            Tensor t({large});
        }
        QCOMPARE(backgroundFreesTotal(), before + 21);
    }
};

QTEST_GUILESS_MAIN(TestBackgroundFree)
#include "tst_backgroundfree.moc"
