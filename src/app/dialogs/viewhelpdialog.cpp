#include "dialogs/viewhelpdialog.h"

#include "view/viewkinds.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace atlas {

ViewHelpDialog::ViewHelpDialog(const ViewKind &kind, QWidget *parent)
    : QDialog(parent)
    , m_text(new QTextBrowser(this))
{
    setWindowTitle(tr("About the %1 view").arg(QString::fromStdString(kind.title)));
    auto *layout = new QVBoxLayout(this);
    auto *heading = new QLabel(this);
    heading->setTextFormat(Qt::PlainText);
    heading->setWordWrap(true);
    heading->setText(QString::fromStdString(kind.title) + QStringLiteral(" — ") + QString::fromStdString(kind.summary));
    QFont bold = heading->font();
    bold.setBold(true);
    heading->setFont(bold);
    layout->addWidget(heading);
    m_text->setOpenExternalLinks(false);
    QString help = QString::fromStdString(kind.help); // "one head's attention …": a sentence here
    if (!help.isEmpty())
        help[0] = help[0].toUpper();
    m_text->setMarkdown(help.isEmpty() ? tr("This view has no description yet.") : help);
    layout->addWidget(m_text, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    resize(fontMetrics().averageCharWidth() * 90, fontMetrics().height() * 24);
}

} // namespace atlas
