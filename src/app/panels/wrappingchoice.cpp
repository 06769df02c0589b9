#include "panels/wrappingchoice.h"

#include <QCheckBox>
#include <QEvent>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QRadioButton>

#include <algorithm>

namespace atlas {

WrappingChoice::WrappingChoice(const QString &text, bool exclusive, QWidget *parent)
    : QWidget(parent)
    , m_button(exclusive ? static_cast<QAbstractButton *>(new QRadioButton(this))
                         : static_cast<QAbstractButton *>(new QCheckBox(this)))
    , m_label(new QLabel(text, this))
{
    m_button->setAccessibleName(text);
    m_label->setWordWrap(true);
    m_label->setTextFormat(Qt::PlainText);
    m_label->setBuddy(m_button);
    m_label->setCursor(Qt::PointingHandCursor);
    m_label->installEventFilter(this);
    auto *row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_button, 0, Qt::AlignTop);
    row->addWidget(m_label, 1);
    sizeIndicator();
}

void WrappingChoice::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        sizeIndicator();
}

// The style draws the indicator at a fixed 13 px whatever the font: on a projector, beside 1.5× text, it was a dot.
// It grows with the text instead, centred on the first line.
void WrappingChoice::sizeIndicator()
{
    const QFontMetrics metrics(font());
    const int side = std::max(13, metrics.ascent());
    const QString sheet
        = QStringLiteral("QRadioButton::indicator, QCheckBox::indicator { width: %1px; height: %1px; }").arg(side);
    if (m_button->styleSheet() != sheet)
        m_button->setStyleSheet(sheet);
    m_button->setContentsMargins(0, std::max(0, (metrics.height() - side) / 2), 0, 0);
}

bool WrappingChoice::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_label && event->type() == QEvent::MouseButtonRelease
        && static_cast<QMouseEvent *>(event)->button() == Qt::LeftButton && m_button->isEnabled()) {
        m_button->click(); // a radio button stays checked, a check box toggles: as a click on the button itself
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace atlas
