#include "bench/stallmeter.h"

#include <algorithm>
#include <ctime>

namespace atlas {

namespace {

double threadCpuMs()
{
    timespec t {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

} // namespace

StallMeter::StallMeter(int intervalMs, QObject *parent)
    : QObject(parent)
    , m_intervalMs(intervalMs)
{
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &StallMeter::tick);
}

void StallMeter::start()
{
    m_longestMs = 0;
    m_longestCpuMs = 0;
    m_cpuAtTickMs = threadCpuMs();
    m_sinceStart.start();
    m_sinceTick.start();
    m_timer.start();
}

void StallMeter::stop()
{
    tick(); // the stall in progress when stop() runs counts too
    m_timer.stop();
}

void StallMeter::tick()
{
    if (!m_sinceTick.isValid())
        return;
    const double stall = m_sinceTick.nsecsElapsed() / 1e6 - m_intervalMs, cpu = threadCpuMs();
    if (stall > m_longestMs) {
        m_longestMs = stall;
        m_longestCpuMs = cpu - m_cpuAtTickMs;
    }
    m_cpuAtTickMs = cpu;
    m_sinceTick.restart();
}

} // namespace atlas
