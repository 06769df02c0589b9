#include "views/view.h"

#include <QEvent>
#include <QLabel>
#include <QLayout>

namespace atlas {

View::View(QWidget *parent)
    : QWidget(parent)
{
    setFocusPolicy(Qt::ClickFocus); // a click (or Enter in the Input box) gives the stepping keys back to the window
}

View::~View()
{
    for (QObject *child : findChildren<QObject *>())
        QObject::disconnect(child, nullptr, this, nullptr);
}

int View::heightForWidth(int width) const
{
    if (const QLayout *l = layout(); l && l->hasHeightForWidth())
        return l->totalMinimumHeightForWidth(width);
    return QWidget::heightForWidth(width);
}

void View::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        refresh();
}

void View::setInput(const ViewInput &input)
{
    m_input = input;
    refresh();
    updateGeometry(); // what it shows decides the room it asks for (a message needs little)
}

void View::setSpec(const ViewSpec &spec)
{
    m_spec = spec;
    refresh();
    updateGeometry();
}

QLabel *View::newFormulaLabel()
{
    auto *label = new QLabel(this);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

QLabel *View::newMessageLabel()
{
    auto *label = new QLabel(this);
    label->setAlignment(Qt::AlignCenter);
    label->setWordWrap(true);
    label->setMargin(20);
    return label;
}

void layOutHidden(QWidget *view)
{
    if (view->isVisible() || view->layout() == nullptr)
        return;
    view->layout()->invalidate();
    view->layout()->activate();
}

} // namespace atlas
