#include "guardedapplication.h"

#include <QMetaObject>

#include <cstdio>
#include <exception>
#include <new>

namespace atlas {

GuardedApplication::GuardedApplication(int &argc, char **argv)
    : QApplication(argc, argv)
{
}

bool GuardedApplication::notify(QObject *receiver, QEvent *event)
{
    try {
        return QApplication::notify(receiver, event);
    } catch (const std::bad_alloc &) {
        report(tr("out of memory"), receiver);
    } catch (const std::exception &e) {
        report(QString::fromUtf8(e.what()), receiver);
    } catch (...) {
        report(tr("an exception of unknown type"), receiver);
    }
    return false;
}

void GuardedApplication::report(const QString &what, QObject *receiver)
{
    const QString where = receiver ? QString::fromLatin1(receiver->metaObject()->className()) : tr("the app");
    const QString message
        = tr("An unexpected error stopped the last action (in %1): %2\n\nThe app keeps running, and no "
             "file is left half-written (every write is atomic). Please report this, with what "
             "you did.")
              .arg(where, what);
    std::fprintf(stderr, "transformer-atlas: unexpected error in %s: %s\n", qPrintable(where), qPrintable(what));
    // Queued: the message box must not open inside the event whose handler just failed.
    QMetaObject::invokeMethod(
        this, [this, message] { emit unexpectedError(message); }, Qt::QueuedConnection);
}

} // namespace atlas
