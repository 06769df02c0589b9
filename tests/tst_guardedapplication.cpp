#include "guardedapplication.h"
#include "testbundle.h"

#include <QSignalSpy>
#include <QTimer>
#include <QtTest>

#include <stdexcept>

using namespace atlas;

namespace {

// Throws from its event handler what the test asks for: a bug somewhere in a slot, a paint or a timer.
class Thrower : public QObject
{
public:
    int handled = 0;
    int kind = 0; // 0: nothing, 1: std::runtime_error, 2: std::bad_alloc, 3: an int

protected:
    bool event(QEvent *e) override
    {
        if (e->type() != QEvent::User)
            return QObject::event(e);
        ++handled;
        switch (kind) {
        case 1:
            throw std::runtime_error("[json.exception.out_of_range.406] number overflow parsing '1e500'");
        case 2:
            throw std::bad_alloc();
        case 3:
            throw 42;
        default:
            return true;
        }
    }
};

} // namespace

class TestGuardedApplication : public QObject
{
    Q_OBJECT

private slots:
    void anExceptionInAHandlerIsReportedAndTheLoopGoesOn()
    {
        auto *app = qobject_cast<GuardedApplication *>(QCoreApplication::instance());
        QVERIFY(app);
        QSignalSpy reported(app, &GuardedApplication::unexpectedError);
        Thrower thrower;
        for (int kind : {1, 2, 3}) {
            thrower.kind = kind;
            QCoreApplication::postEvent(&thrower, new QEvent(QEvent::User));
            QCoreApplication::processEvents(); // the event, then the queued report
            QCoreApplication::processEvents();
        }
        QCOMPARE(thrower.handled, 3);
        QCOMPARE(reported.count(), 3);
        QVERIFY(reported[0][0].toString().contains("number overflow parsing '1e500'"));
        QVERIFY(reported[0][0].toString().contains("keeps running"));
        QVERIFY(reported[1][0].toString().contains("out of memory"));
        QVERIFY(reported[2][0].toString().contains("unknown type"));

        // And the next event is handled as usual.
        thrower.kind = 0;
        QCoreApplication::postEvent(&thrower, new QEvent(QEvent::User));
        QCoreApplication::processEvents();
        QCOMPARE(thrower.handled, 4);
        QCOMPARE(reported.count(), 3);
    }

    void anExceptionInATimerSlotIsCaughtToo()
    {
        auto *app = qobject_cast<GuardedApplication *>(QCoreApplication::instance());
        QSignalSpy reported(app, &GuardedApplication::unexpectedError);
        QTimer::singleShot(0, app, [] { throw std::logic_error("a bug in a slot"); });
        QTRY_COMPARE(reported.count(), 1);
        QVERIFY(reported[0][0].toString().contains("a bug in a slot"));
    }
};

ATLAS_TEST_OWN_MAIN(TestGuardedApplication)
{
    GuardedApplication app(argc, argv);
    TestGuardedApplication test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_guardedapplication.moc"
