#include "focusedkeys.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QKeyEvent>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTextEdit>

namespace atlas {

FocusedKeys::FocusedKeys(QObject *parent)
    : QObject(parent)
{
}

bool FocusedKeys::widgetUsesKey(const QWidget *w, const QKeyEvent &key)
{
    if (w == nullptr)
        return false;
    const int k = key.key();
    const bool space = k == Qt::Key_Space, homeEnd = k == Qt::Key_Home || k == Qt::Key_End;
    if (!space && !homeEnd)
        return false;
    const bool typing = qobject_cast<const QLineEdit *>(w) || qobject_cast<const QAbstractSpinBox *>(w)
        || (qobject_cast<const QTextEdit *>(w) && !static_cast<const QTextEdit *>(w)->isReadOnly())
        || (qobject_cast<const QPlainTextEdit *>(w) && !static_cast<const QPlainTextEdit *>(w)->isReadOnly());
    if (typing)
        return true;
    if (qobject_cast<const QAbstractSlider *>(w) || qobject_cast<const QAbstractItemView *>(w)
        || qobject_cast<const QComboBox *>(w))
        return homeEnd || (space && !qobject_cast<const QAbstractSlider *>(w));
    return space && key.modifiers() == Qt::NoModifier && qobject_cast<const QAbstractButton *>(w);
}

bool FocusedKeys::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::ShortcutOverride && watched == QApplication::focusWidget()
        && widgetUsesKey(QApplication::focusWidget(), *static_cast<QKeyEvent *>(event)))
        event->accept(); // the key goes to the widget as a key press, not to the window's shortcut
    return QObject::eventFilter(watched, event);
}

} // namespace atlas
