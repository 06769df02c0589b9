#include "icons.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace atlas {

namespace {

constexpr int kSide = 64; // drawn large, scaled down by Qt for the toolbar

// A triangle pointing right (or left), its tip at x.
QPainterPath triangle(double x, bool right)
{
    QPainterPath path;
    const double w = 18, top = 16, bottom = 48;
    path.moveTo(x, 32);
    path.lineTo(right ? x - w : x + w, top);
    path.lineTo(right ? x - w : x + w, bottom);
    path.closeSubpath();
    return path;
}

} // namespace

QIcon appIcon(AppIcon icon, const QColor &color)
{
    QPixmap pixmap(kSide, kSide);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(color);
    switch (icon) {
    case AppIcon::Rewind:
        p.drawRect(QRectF(12, 16, 5, 32));
        p.drawPath(triangle(19, false));
        p.drawPath(triangle(35, false));
        break;
    case AppIcon::StepBack:
        p.drawPath(triangle(14, false));
        p.drawPath(triangle(30, false));
        break;
    case AppIcon::Step:
        p.drawPath(triangle(50, true));
        p.drawPath(triangle(34, true));
        break;
    case AppIcon::RunToEnd:
        p.drawPath(triangle(45, true));
        p.drawPath(triangle(29, true));
        p.drawRect(QRectF(47, 16, 5, 32));
        break;
    case AppIcon::Info:
        p.setPen(QPen(color, 5));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(QRectF(8, 8, 48, 48));
        p.setPen(Qt::NoPen);
        p.setBrush(color);
        p.drawEllipse(QRectF(28.5, 17, 7, 7));
        p.drawRect(QRectF(29, 28, 6, 20));
        break;
    }
    p.end();
    return QIcon(pixmap);
}

} // namespace atlas
