// A thread that asks for it has its large tensor buffers freed by the background thread; small ones, and every
// other thread's, are freed at once. Buffers of the sizes the engine repeats are kept for reuse.
#include "tensor/backgroundfree.h"
#include "tensor/buffercache.h"
#include "tensor/tensor.h"
#include "testbundle.h"

#include <QTest>

#include <algorithm>
#include <thread>
#include <vector>

using namespace atlas;

class TestBackgroundFree : public QObject
{
    Q_OBJECT

private slots:
    void largeBuffersGoToTheBackgroundThread()
    {
        // Larger than any buffer kept for reuse, which is not freed at all.
        const int64_t large = int64_t(std::max(kBackgroundFreeBytes, kCachedBufferMaxBytes) / sizeof(float)) + 1;
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

    void buffersOfOneSizeAreKeptForTheNext()
    {
        if (!keepsTensorBuffers())
            QSKIP("buffers are not kept under the address sanitizer");
        releaseCachedTensorBuffers();
        QCOMPARE(cachedTensorBufferBytes(), size_t(0));
        const int64_t mib = (1 << 20) / int64_t(sizeof(float));
        const float *first = nullptr;
        {
            Tensor t({mib});
            first = t.data();
            Tensor small({100}); // below kCachedBufferMinBytes: freed at once
        }
        QCOMPARE(cachedTensorBufferBytes(), size_t(1) << 20);
        {
            const Tensor other({mib + 16}); // another size: not that buffer
            QVERIFY(other.data() != first);
            const Tensor again({4, mib / 4}, 2.0f); // the same bytes in another shape, filled as asked
            QCOMPARE(again.data(), first);
            QCOMPARE(again.data()[mib - 1], 2.0f);
        }
        QCOMPARE(cachedTensorBufferBytes(), (size_t(2) << 20) + 64);
        {
            std::vector<Tensor> many; // 320 MiB at once, more than is kept
            for (int i = 0; i < 40; ++i)
                many.emplace_back(Shape {8 * mib});
        }
        QVERIFY(cachedTensorBufferBytes() <= kCachedBufferBytes);
        QVERIFY(cachedTensorBufferBytes() > kCachedBufferBytes - (size_t(8) << 20));
        releaseCachedTensorBuffers();
        QCOMPARE(cachedTensorBufferBytes(), size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestBackgroundFree)
#include "tst_backgroundfree.moc"
