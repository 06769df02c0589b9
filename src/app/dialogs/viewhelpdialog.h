#pragma once

#include <QDialog>

class QTextBrowser;

namespace atlas {

struct ViewKind;

// Help ▸ About This View (Shift+F1): what the view on screen shows and the settings it reads, from its folder's
// NAME.md (ViewKind::help), under its title and one-line summary.
class ViewHelpDialog : public QDialog
{
    Q_OBJECT

public:
    ViewHelpDialog(const ViewKind &kind, QWidget *parent = nullptr);

    QTextBrowser *text() const { return m_text; }

private:
    QTextBrowser *m_text;
};

} // namespace atlas
