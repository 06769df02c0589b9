#pragma once

#include <QDialog>

class QMenuBar;
class QTableWidget;

namespace atlas {

// Help ▸ Keyboard Shortcuts: every menu action that has a key, read from the menus themselves (so the list
// cannot go stale), and the keys that are not menu actions (Enter in the Input box, clicks on chips and heads).
class ShortcutsDialog : public QDialog
{
    Q_OBJECT

public:
    ShortcutsDialog(const QMenuBar *menus, QWidget *parent = nullptr);

    QTableWidget *table() const { return m_table; }

private:
    QTableWidget *m_table;
};

} // namespace atlas
