#include "bench/stallmeter.h"

#include <algorithm>

namespace atlas {

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
    m_longestMs = std::max(m_longestMs, m_sinceTick.nsecsElapsed() / 1e6 - m_intervalMs);
    m_sinceTick.restart();
}

} // namespace atlas
