#pragma once

#include "model/builtinmodels.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <map>
#include <string>
#include <vector>

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
    // A built-in model's name, or a directory as one absolute path (the box and the list find it however it was
    // given); a built-in model's own directory, dropped on the window or opened from the File menu, is its name.
    QString modelKey(const std::string &model) const;
    bool isBuiltinName(const QString &name) const;

    // The built-in models, listed once: their names, and each directory's canonical path to its name.
    std::vector<BuiltinModel> m_builtins;
    std::map<QString, QString> m_builtinByDirectory;
    Session *m_session;
    QComboBox *m_box;
    QMenu *m_recentMenu;
    QStringList m_recent;
};

} // namespace atlas
