#pragma once

#include <QWidget>

class QLineEdit;
class QLabel;
class QScrollArea;

namespace atlas {

class Session;
class TokenChipStrip;

// The input: a text box (or token ids), and the tokens as chips. An encoder-decoder reads two: the box is its source
// (its chips toggle padding), and a second box and row of chips its decoder's input.
class InputPanel : public QWidget
{
    Q_OBJECT

public:
    explicit InputPanel(Session *session, QWidget *parent = nullptr);

    QLineEdit *textBox() const { return m_text; }

signals:
    void submitted(); // Enter or Run: the text goes to the session

private:
    void submit();
    void showInput();
    QString displayedInput() const;
    QString displayedDecoderInput() const;
    QScrollArea *chipRow(TokenChipStrip *chips);

    Session *m_session;
    QLineEdit *m_text;
    QLabel *m_summary;
    TokenChipStrip *m_chips;
    QScrollArea *m_scroll = nullptr;
    QLabel *m_sourceLabel;
    QLabel *m_decoderLabel;
    QLineEdit *m_decoderText;
    bool m_submitting = false; // an input was submitted and has neither run nor been refused yet
    TokenChipStrip *m_decoderChips;
    QScrollArea *m_decoderScroll = nullptr;
};

} // namespace atlas
