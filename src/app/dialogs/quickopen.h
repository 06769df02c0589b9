#pragma once

#include <QDialog>
#include <QString>

#include <functional>
#include <vector>

class QLineEdit;
class QListWidget;

namespace atlas {

// One thing the quick search can open: a view, a lesson, a model.
struct QuickOpenEntry
{
    QString kind; // "View", "Lesson", "Model": shown before the title
    QString title;
    QString detail; // searched too (a view's group and summary, a lesson's lecture, a model's description)
    std::function<void()> open;
};

// View ▸ Go To… (Ctrl+K): type a few letters of any view, lesson or model and press Enter. Every word typed must
// occur in the entry (its kind, title or detail, any case); titles that start with the words come first.
class QuickOpen : public QDialog
{
    Q_OBJECT

public:
    QuickOpen(std::vector<QuickOpenEntry> entries, QWidget *parent = nullptr);

    // The indices of the entries matching `query`, best first.
    static std::vector<int> matches(const std::vector<QuickOpenEntry> &entries, const QString &query);
    QLineEdit *searchBox() const { return m_search; }
    QListWidget *list() const { return m_list; }
    // The entry chosen when the dialog was accepted; −1 before.
    int chosen() const { return m_chosen; }
    const QuickOpenEntry &entry(int index) const { return m_entries.at(size_t(index)); }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void filter();
    void choose();

    std::vector<QuickOpenEntry> m_entries;
    QLineEdit *m_search;
    QListWidget *m_list;
    int m_chosen = -1;
};

} // namespace atlas
