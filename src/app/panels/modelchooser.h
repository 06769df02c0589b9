#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

class QComboBox;
class QMainWindow;
class QMenu;

namespace atlas {

class Session;

// The models the window offers: the built-in ones and the model directories opened lately (most recent first, kept
// between sessions), in the toolbar's box and in File ▸ Open Recent. Choosing one opens it in the session with its
// sample input.
class ModelChooser : public QObject
{
    Q_OBJECT

public:
    ModelChooser(Session *session, QMainWindow *window, QMenu *recentMenu);

    QComboBox *box() const { return m_box; }
    QStringList recentDirectories() const { return m_recent; }
    static constexpr int kRecentCount = 8;

private:
    void sync(); // the box and the menu show the session's model and the recent list
    void remember(const QString &directory);
    void fillBox();
    void fillRecentMenu();

    Session *m_session;
    QComboBox *m_box;
    QMenu *m_recentMenu;
    QStringList m_recent;
};

} // namespace atlas
