#pragma once

// What the tests of the whole window share: waiting until the session has settled, the window on tiny-bytes, and a
// screenshot when ATLAS_SCREENSHOTS names a directory.
#include "mainwindow.h"
#include "session/session.h"

#include <QTest>

namespace atlas::testing {

// No run and no analysis in flight, twice over: a finished run may queue the next one.
inline void waitUntilSettled(Session &session)
{
    QTRY_VERIFY_WITH_TIMEOUT(!session.busy(), 20000);
    QTest::qWait(20);
    QTRY_VERIFY_WITH_TIMEOUT(!session.busy(), 20000);
}

// The window shown at 1400×900 on tiny-bytes, its default input run to the end.
inline void showOnTinyBytes(Session &session, MainWindow &window)
{
    window.resize(1400, 900);
    window.show();
    session.openModel("tiny-bytes");
    QTRY_VERIFY_WITH_TIMEOUT(session.program() != nullptr, 20000);
    waitUntilSettled(session);
}

inline void saveScreenshot(QWidget &w, const QString &name)
{
    const QString dir = qEnvironmentVariable("ATLAS_SCREENSHOTS");
    if (!dir.isEmpty())
        QVERIFY(w.grab().save(dir + "/" + name + ".png"));
}

} // namespace atlas::testing
