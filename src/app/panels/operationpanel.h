#pragma once

#include <QWidget>

class QListWidget;
class QLabel;

namespace atlas {

class Session;

// The program's operations in order: run ones in full colour, the next one marked, later ones greyed.
// Selecting an operation runs (or rewinds) the engine to just after it. Below, the current operation's
// outputs with their shapes and formulas.
class OperationPanel : public QWidget
{
    Q_OBJECT

public:
    explicit OperationPanel(Session *session, QWidget *parent = nullptr);

signals:
    void tensorChosen(const QString &name);

protected:
    void changeEvent(QEvent *event) override;

private:
    void fitToFont();
    void rebuild();
    void showCursor();

    Session *m_session;
    QListWidget *m_list;
    QLabel *m_details;
};

} // namespace atlas
