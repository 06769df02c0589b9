#pragma once

#include <QApplication>

namespace atlas {

// The app's last line of defence: an exception that escapes an event handler (a slot, a paint, a timer) is caught
// here, written to stderr and reported through `unexpectedError`, and the event loop goes on. Every entry point
// already turns the errors it expects into messages naming the file and the field; this catches what was missed,
// so that a bug costs one action, never the user's session.
class GuardedApplication : public QApplication
{
    Q_OBJECT

public:
    GuardedApplication(int &argc, char **argv);

    bool notify(QObject *receiver, QEvent *event) override;

signals:
    // Emitted (queued, after the failed event has unwound) with a message for the user.
    void unexpectedError(const QString &message);

private:
    void report(const QString &what, QObject *receiver);
};

} // namespace atlas
