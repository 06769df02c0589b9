#include "dialogs/quickopen.h"

#include <QCoreApplication>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace atlas {

QuickOpen::QuickOpen(std::vector<QuickOpenEntry> entries, QWidget *parent)
    : QDialog(parent)
    , m_entries(std::move(entries))
    , m_search(new QLineEdit(this))
    , m_list(new QListWidget(this))
{
    setWindowTitle(tr("Go To"));
    m_search->setPlaceholderText(tr("A view, a lesson or a model: type a few letters, then Enter"));
    m_search->setClearButtonEnabled(true);
    m_search->installEventFilter(this);
    m_list->setUniformItemSizes(true);
    auto *hint = new QLabel(tr("↑ ↓ choose · Enter opens · Esc closes"), this);
    hint->setEnabled(false);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_search);
    layout->addWidget(m_list, 1);
    layout->addWidget(hint);
    resize(640, 460);
    connect(m_search, &QLineEdit::textChanged, this, &QuickOpen::filter);
    connect(m_search, &QLineEdit::returnPressed, this, &QuickOpen::choose);
    connect(m_list, &QListWidget::itemActivated, this, &QuickOpen::choose);
    filter();
}

std::vector<int> QuickOpen::matches(const std::vector<QuickOpenEntry> &entries, const QString &query)
{
    const QStringList words = query.simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    std::vector<std::pair<int, int>> ranked; // (rank, index)
    for (int i = 0; i < int(entries.size()); ++i) {
        const QuickOpenEntry &e = entries[size_t(i)];
        const QString all = e.kind + QLatin1Char(' ') + e.title + QLatin1Char(' ') + e.detail;
        if (!std::all_of(
                words.begin(), words.end(), [&](const QString &w) { return all.contains(w, Qt::CaseInsensitive); }))
            continue;
        int rank = 2;
        if (!words.isEmpty() && e.title.startsWith(words.join(QLatin1Char(' ')), Qt::CaseInsensitive))
            rank = 0;
        else if (std::all_of(words.begin(), words.end(),
                     [&](const QString &w) { return e.title.contains(w, Qt::CaseInsensitive); }))
            rank = 1;
        ranked.emplace_back(rank, i);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](auto a, auto b) { return a.first < b.first; });
    std::vector<int> out;
    for (const auto &[rank, index] : ranked)
        out.push_back(index);
    return out;
}

void QuickOpen::filter()
{
    m_list->clear();
    for (int index : matches(m_entries, m_search->text())) {
        const QuickOpenEntry &e = m_entries[size_t(index)];
        auto *item = new QListWidgetItem(QStringLiteral("%1 · %2").arg(e.kind, e.title), m_list);
        item->setToolTip(e.detail);
        item->setData(Qt::UserRole, index);
    }
    if (m_list->count() == 0)
        new QListWidgetItem(tr("Nothing matches \u201C%1\u201D").arg(m_search->text()), m_list);
    m_list->setCurrentRow(0);
}

void QuickOpen::choose()
{
    const QListWidgetItem *item = m_list->currentItem();
    if (!item || !item->data(Qt::UserRole).isValid())
        return;
    m_chosen = item->data(Qt::UserRole).toInt();
    accept();
}

bool QuickOpen::eventFilter(QObject *watched, QEvent *event)
{
    // Up, Down, Page Up and Page Down move in the list while the typing stays in the search box.
    if (watched == m_search && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent *>(event)->key();
        if (key == Qt::Key_Up || key == Qt::Key_Down || key == Qt::Key_PageUp || key == Qt::Key_PageDown) {
            QCoreApplication::sendEvent(m_list, event);
            return true;
        }
    }
    return QDialog::eventFilter(watched, event);
}

} // namespace atlas
