#include "panels/wrappingchoice.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QRadioButton>

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
