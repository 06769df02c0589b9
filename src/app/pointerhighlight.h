#pragma once

#include <QElapsedTimer>
#include <QPoint>
#include <QTimer>
#include <QWidget>

namespace atlas {

// A ring where the lecturer clicked, fading out over a second, over the whole window: in presentation mode the
// class sees what is being pointed at. It lets every mouse event through.
class PointerHighlight : public QWidget
{
    Q_OBJECT

public:
    explicit PointerHighlight(QWidget *window);

    void setEnabled(bool on); // watches the application's clicks while on
    bool isShowing() const { return m_timer.isActive(); }
    QPoint lastPoint() const { return m_point; } // in the window's coordinates

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;

private:
    void pointAt(const QPoint &globalPosition);

    QPoint m_point;
    QElapsedTimer m_age;
    QTimer m_timer;
};

} // namespace atlas
