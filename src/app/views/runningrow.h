#pragma once

#include <QWidget>

class QProgressBar;
class QPushButton;

namespace atlas {

class View;

// A view's analysis under way: its progress bar and a Cancel button that stops it (View::analysisCancelled), centred
// in a row the view shows while the analysis runs.
class RunningRow : public QWidget
{
    Q_OBJECT

public:
    // `format`: the bar's text (QProgressBar::setFormat, "%v of %m passes"); `cancelTip`: what Cancel stops.
    RunningRow(View *view, const QString &format, const QString &cancelTip, QWidget *parent);

    QProgressBar *bar() const { return m_bar; }
    QPushButton *cancelButton() const { return m_cancel; }
    // done of total, or a busy bar when total is 0.
    void setProgress(int done, int total);

private:
    QProgressBar *m_bar = nullptr;
    QPushButton *m_cancel = nullptr;
};

} // namespace atlas
