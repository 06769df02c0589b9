#pragma once

#include <QWidget>

#include <vector>

namespace atlas {

// The input tokens as chips: the readable piece on top, the id below, padding chips hatched. Wraps lines.
// Clicking a chip toggles it as padding.
class TokenChips : public QWidget
{
    Q_OBJECT

public:
    explicit TokenChips(QWidget *parent = nullptr);

    void setTokens(const QStringList &pieces, const std::vector<int> &ids, const std::vector<int> &padding);
    QSize sizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

signals:
    void chipClicked(int position);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    bool event(QEvent *event) override;

private:
    std::vector<QRect> layoutChips(int width) const;

    QStringList m_pieces;
    std::vector<int> m_ids;
    std::vector<int> m_padding;
};

} // namespace atlas
