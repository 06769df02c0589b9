#pragma once

#include <QObject>

class QKeyEvent;
class QWidget;

namespace atlas {

// The window's stepping shortcuts (Space, Shift+Space, Home, End) yield to the focused widget when it uses that
// key itself: Home in a slider or a list, Space on a button or in a text box. Without this a window-wide shortcut
// took the key whatever had focus (Home in the lesson list rewound the model). Installed on the application; it
// lets every event through and only answers Qt's ShortcutOverride question.
class FocusedKeys : public QObject
{
    Q_OBJECT

public:
    explicit FocusedKeys(QObject *parent = nullptr);

    // Whether `widget` handles `key` itself, so that a window shortcut on that key must not take it.
    static bool widgetUsesKey(const QWidget *widget, const QKeyEvent &key);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
};

} // namespace atlas
