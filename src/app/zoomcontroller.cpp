#include "zoomcontroller.h"

#include <QApplication>
#include <QFont>
#include <QMainWindow>
#include <QPointer>
#include <QSettings>
#include <QTimer>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

const char *kSetting = "view/zoom";

// The application font's size when the first controller was made: zoom 100 %, whatever zoom is applied later.
double basePoints()
{
    static const double points = QApplication::font().pointSizeF() > 0 ? QApplication::font().pointSizeF() : 10.0;
    return points;
}

} // namespace

ZoomController::ZoomController(QObject *parent)
    : QObject(parent)
    , m_basePoints(basePoints())
{
    m_zoom = 0; // so that the saved zoom (or 100 %) is applied even if an earlier window left another
    setZoom(QSettings().value(kSetting, 1.0).toDouble());
}

const std::vector<double> &ZoomController::levels()
{
    static const std::vector<double> steps = {0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0};
    return steps;
}

void ZoomController::setZoom(double zoom)
{
    const auto nearest = std::min_element(levels().begin(), levels().end(),
        [zoom](double a, double b) { return std::abs(std::log(a / zoom)) < std::abs(std::log(b / zoom)); });
    if (!std::isfinite(zoom) || *nearest == m_zoom)
        return;
    emit zoomAboutToChange(m_zoom);
    m_zoom = *nearest;
    apply();
    QSettings().setValue(kSetting, m_zoom);
    emit zoomChanged(m_zoom);
}

void ZoomController::zoomIn()
{
    const auto next = std::upper_bound(levels().begin(), levels().end(), m_zoom + 1e-9);
    if (next != levels().end())
        setZoom(*next);
}

void ZoomController::zoomOut()
{
    const auto at = std::lower_bound(levels().begin(), levels().end(), m_zoom - 1e-9);
    if (at != levels().begin())
        setZoom(*(at - 1));
}

void ZoomController::reset()
{
    setZoom(1.0);
}

void ZoomController::apply()
{
    QFont font = QApplication::font();
    font.setPointSizeF(m_basePoints * m_zoom);
    QApplication::setFont(font);
}

void restoreStateAfterRelayout(QMainWindow *window, const QByteArray &state)
{
    QTimer::singleShot(0, window, [window = QPointer<QMainWindow>(window), state] {
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        if (window)
            window->restoreState(state);
    });
}

} // namespace atlas
