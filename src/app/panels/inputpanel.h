#pragma once

#include <QWidget>

class QLineEdit;
class QLabel;

namespace atlas {

class Session;
class TokenChipStrip;

// The input: a text box (or token ids), and the tokens as chips.
class InputPanel : public QWidget
{
    Q_OBJECT

public:
    explicit InputPanel(Session *session, QWidget *parent = nullptr);

private:
    void submit();
    void showInput();

    Session *m_session;
    QLineEdit *m_text;
    QLabel *m_summary;
    TokenChipStrip *m_chips;
};

} // namespace atlas
