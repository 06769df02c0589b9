#include "pointerhighlight.h"

#include <QApplication>
#include <QMouseEvent>
#include <QPainter>

namespace atlas {

namespace {

constexpr int kFadeMs = 1200;

} // namespace

PointerHighlight::PointerHighlight(QWidget *window)
    : QWidget(window)
{
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setAttribute(Qt::WA_NoSystemBackground);
    setFocusPolicy(Qt::NoFocus);
    hide();
    m_timer.setInterval(30);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        if (m_age.elapsed() > kFadeMs) {
            m_timer.stop();
            hide();
        }
        update();
    });
}

void PointerHighlight::setEnabled(bool on)
{
    if (on)
        qApp->installEventFilter(this);
    else {
        qApp->removeEventFilter(this);
        m_timer.stop();
        hide();
    }
}

bool PointerHighlight::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::MouseButtonPress && watched->isWidgetType()
        && static_cast<QWidget *>(watched)->window() == parentWidget())
        pointAt(static_cast<QMouseEvent *>(event)->globalPosition().toPoint());
    return false;
}

void PointerHighlight::pointAt(const QPoint &globalPosition)
{
    m_point = parentWidget()->mapFromGlobal(globalPosition);
    setGeometry(parentWidget()->rect());
    raise();
    show();
    m_age.start();
    m_timer.start();
    update();
}

void PointerHighlight::paintEvent(QPaintEvent *)
{
    const double t = std::min(1.0, double(m_age.elapsed()) / kFadeMs);
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const double radius = fontMetrics().height() * (1.2 + 1.3 * t);
    QColor ring(230, 40, 40);
    ring.setAlphaF(float(0.85 * (1 - t)));
    p.setPen(QPen(ring, std::max(3.0, fontMetrics().height() / 5.0)));
    QColor fill(255, 200, 0);
    fill.setAlphaF(float(0.25 * (1 - t)));
    p.setBrush(fill);
    p.drawEllipse(QPointF(m_point), radius, radius);
}

} // namespace atlas
