#pragma once

#include <QWidget>

class QAbstractButton;
class QLabel;

namespace atlas {

// A radio button or check box whose text wraps to the width it is given: a QAbstractButton's own text never wraps,
// so a long answer widened the lesson panel past the screen. The button carries no text; beside it, a word-wrapped
// label that toggles it when clicked (and names it for screen readers).
class WrappingChoice : public QWidget
{
    Q_OBJECT

public:
    // `exclusive`: a radio button (put the buttons of one question in a QButtonGroup); else a check box.
    WrappingChoice(const QString &text, bool exclusive, QWidget *parent = nullptr);

    QAbstractButton *button() const { return m_button; }
    QLabel *label() const { return m_label; }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void sizeIndicator();

    QAbstractButton *m_button;
    QLabel *m_label;
};

} // namespace atlas
