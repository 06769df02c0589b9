#pragma once

#include <QStringList>
#include <QWidget>

#include <vector>

namespace atlas {

// The input tokens as one row of chips (the token on top, its position below), for a horizontal scroll area.
// Global chips are filled, padding chips hatched. With clickable on, a click emits chipClicked(position).
// Chip positions are laid out once per setTokens and only the exposed chips are painted, so 16384 tokens cost
// no more to draw than 40.
class PatternTokenStrip : public QWidget
{
    Q_OBJECT

public:
    explicit PatternTokenStrip(QWidget *parent = nullptr);

    void setTokens(const QStringList &labels, const std::vector<int> &padding);
    void setGlobal(const std::vector<int> &positions); // sorted or not
    void setClickable(bool clickable, const QString &why);
    QRect chipRect(int position) const;
    int chipAt(const QPoint &pos) const; // −1 between or outside chips
    bool isGlobal(int position) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }

signals:
    void chipClicked(int position);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    bool event(QEvent *event) override;

private:
    int chipHeight() const;

    QStringList m_labels;
    std::vector<int> m_left; // (T+1): chip t spans [m_left[t], m_left[t+1] − gap)
    std::vector<unsigned char> m_global, m_padding; // (T)
    bool m_clickable = true;
    QString m_why; // tooltip line when not clickable
};

} // namespace atlas
