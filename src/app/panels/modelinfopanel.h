#pragma once

#include <QWidget>

class QLabel;

namespace atlas {

class Session;

// The model on screen, whole: its name, what it is and what to look at (its description, wrapped, never cut),
// its shape and options, and the sample input the model menu opens it with.
class ModelInfoPanel : public QWidget
{
    Q_OBJECT

public:
    explicit ModelInfoPanel(Session *session, QWidget *parent = nullptr);

    QString text() const; // what the panel shows, as plain text

private:
    void showModel();

    Session *m_session;
    QLabel *m_label;
};

} // namespace atlas
