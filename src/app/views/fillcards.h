#pragma once

#include <QColor>
#include <QString>
#include <QWidget>

#include <vector>

namespace atlas {

// Cards in a grid, one per hidden position of the Masked fills view: a header in the colour of what the position
// became, the text around it, the model's first choices as bars (the original's bar marked), and a footer. Drawing
// only: the view fills the cards from its analysis.
class FillCards : public QWidget
{
    Q_OBJECT

public:
    struct Row
    {
        QString label;
        double probability = 0;
        bool original = false;
    };
    struct Card
    {
        QString title; // "position 23: [MASK]"
        QString before, hidden, after; // the tokens before it, the one the model read there, the tokens after
        QColor fill; // what the position became
        std::vector<Row> rows; // most probable first
        QString footer; // where the original stands, when known
    };

    explicit FillCards(QWidget *parent = nullptr);

    void setCards(std::vector<Card> cards);
    const std::vector<Card> &cards() const { return m_cards; }
    QRect cardRect(int index) const; // at the current width

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    QSize cardSize() const;
    int columns(int width) const;
    void paintCard(QPainter &p, const Card &card, const QRect &r) const;
    void paintContext(QPainter &p, const Card &card, const QRect &r) const;

    std::vector<Card> m_cards;
};

} // namespace atlas
