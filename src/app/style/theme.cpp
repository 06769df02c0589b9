#include "style/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

namespace atlas {

void applyTheme(bool dark)
{
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    if (!dark) {
        QApplication::setPalette(QApplication::style()->standardPalette());
        return;
    }
    QPalette p;
    const QColor window(37, 37, 40), base(28, 28, 30), text(230, 230, 230), mid(90, 90, 96);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(48, 48, 52));
    p.setColor(QPalette::ToolTipBase, QColor(50, 50, 55));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::PlaceholderText, QColor(150, 150, 155));
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::Mid, mid);
    p.setColor(QPalette::Highlight, QColor(64, 120, 200));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(110, 170, 255));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(120, 120, 120));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(120, 120, 120));
    QApplication::setPalette(p);
}

void applyHighContrastTheme()
{
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    QPalette p = QApplication::style()->standardPalette();
    for (auto role : {QPalette::Window, QPalette::Base, QPalette::Button, QPalette::AlternateBase})
        p.setColor(role, Qt::white);
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText, QPalette::ToolTipText})
        p.setColor(role, Qt::black);
    p.setColor(QPalette::ToolTipBase, QColor(255, 255, 220));
    p.setColor(QPalette::Mid, QColor(60, 60, 60));
    p.setColor(QPalette::Highlight, QColor(0, 70, 200));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0, 60, 190));
    QApplication::setPalette(p);
}

namespace {

bool darkPalette()
{
    return QApplication::palette().color(QPalette::Window).lightness() < 128;
}

} // namespace

QColor warningTextColor()
{
    return darkPalette() ? QColor(0xff, 0x8a, 0x80) : QColor(0xc5, 0x22, 0x1f);
}

QColor accentTextColor()
{
    return darkPalette() ? QColor(0xf5, 0xa3, 0x5c) : QColor(0xa8, 0x4b, 0x00);
}

QString textColorStyle(const QColor &color)
{
    return QStringLiteral("color: %1").arg(color.name());
}

} // namespace atlas
