#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

namespace atlas {

// Measures how long the GUI thread's event loop was kept from running: a precise timer asks to fire every
// `interval` ms, and the longest gap between two firings, less the interval, is the longest stall (everything
// the GUI thread did in between: slots, layouts, painting). Resolution: about the interval. Beside it, the CPU time
// the thread used during that stall: close to the stall, the thread was working; far below it, it was waiting (a
// lock, a wait for a worker, or for a core).
class StallMeter : public QObject
{
    Q_OBJECT

public:
    explicit StallMeter(int intervalMs = 4, QObject *parent = nullptr);

    void start(); // forgets what was measured
    void stop();
    double longestStallMs() const { return m_longestMs; }
    double longestStallCpuMs() const { return m_longestCpuMs; }
    double elapsedMs() const { return m_sinceStart.isValid() ? m_sinceStart.nsecsElapsed() / 1e6 : 0; }

private:
    void tick();

    QTimer m_timer;
    QElapsedTimer m_sinceTick, m_sinceStart;
    int m_intervalMs;
    double m_longestMs = 0, m_longestCpuMs = 0;
    double m_cpuAtTickMs = 0;
};

} // namespace atlas
