#include "dialogs/shortcutsdialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMenu>
#include <QMenuBar>
#include <QTableWidget>
#include <QVBoxLayout>

namespace atlas {

namespace {

struct Row
{
    QString group, keys, what;
};

// A menu's actions with keys, its submenus' too, grouped under the menu's title.
void collect(const QMenu *menu, const QString &group, std::vector<Row> &rows)
{
    for (const QAction *action : menu->actions()) {
        if (action->menu() != nullptr) {
            collect(action->menu(), group, rows);
            continue;
        }
        QStringList keys;
        for (const QKeySequence &k : action->shortcuts())
            keys << k.toString(QKeySequence::NativeText);
        if (keys.isEmpty())
            continue;
        QString what = action->text().remove('&');
        if (what.endsWith(QStringLiteral("…")))
            what.chop(1);
        rows.push_back({group, keys.join(QStringLiteral(", ")), what});
    }
}

} // namespace

ShortcutsDialog::ShortcutsDialog(const QMenuBar *menus, QWidget *parent)
    : QDialog(parent)
    , m_table(new QTableWidget(this))
{
    setWindowTitle(tr("Keyboard Shortcuts"));
    std::vector<Row> rows;
    for (const QAction *top : menus->actions())
        if (top->menu() != nullptr)
            collect(top->menu(), top->text().remove('&'), rows);
    const QString elsewhere = tr("Elsewhere");
    rows.push_back(
        {elsewhere, tr("Enter"), tr("In the Input box: tokenize and run the text; the stepping keys work again")});
    rows.push_back({elsewhere, tr("#ids"), tr("In the Input box: give token ids directly, e.g. #84,104,101")});
    rows.push_back({elsewhere, tr("Click a token chip"), tr("Make that position padding, or not")});
    rows.push_back({elsewhere, tr("Click a head"), tr("In All heads: open that head in the Attention tab")});
    rows.push_back({elsewhere, tr("Click"), tr("In the LSH view: pause or play the rounds")});
    rows.push_back({elsewhere, tr("Mouse wheel"), tr("Over a heat map: zoom into the cell under the pointer")});
    rows.push_back({elsewhere, tr("Drag"), tr("On a zoomed heat map: move the window")});
    rows.push_back({elsewhere, tr("Double-click"), tr("On a zoomed heat map: show the whole matrix again")});
    rows.push_back({elsewhere, tr("+  −  0"), tr("On a heat map clicked first: zoom in, out, show the whole matrix")});
    rows.push_back({elsewhere, tr("Arrows"), tr("On a zoomed heat map clicked first: move the window by a tenth")});
    m_table->setColumnCount(3);
    m_table->setRowCount(int(rows.size()));
    m_table->setHorizontalHeaderLabels({tr("Menu"), tr("Keys"), tr("Does")});
    for (size_t i = 0; i < rows.size(); ++i) {
        m_table->setItem(int(i), 0, new QTableWidgetItem(rows[i].group));
        m_table->setItem(int(i), 1, new QTableWidgetItem(rows[i].keys));
        m_table->setItem(int(i), 2, new QTableWidgetItem(rows[i].what));
    }
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_table);
    layout->addWidget(buttons);
    resize(720, 560);
}

} // namespace atlas
