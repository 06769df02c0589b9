#pragma once

#include "views/view.h"

#include <QImage>

#include <functional>
#include <memory>
#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QScrollArea;

namespace atlas {

struct HeadKindsAnalysis;

// The heads as cards in a flowing grid: each a thumbnail of its attention, its name and its score; a click opens it.
class HeadGallery : public QWidget
{
public:
    struct Card
    {
        int layer = 0, head = 0;
        double score = 0;
        QImage thumbnail;
        QString tooltip;
    };

    explicit HeadGallery(QWidget *parent = nullptr);
    void setCards(std::vector<Card> cards, const std::string &theme);
    const std::vector<Card> &cards() const { return m_cards; }
    std::function<void(const Card &)> onClick;
    // The card under a widget position; −1 for none.
    int cardAt(const QPoint &pos) const;
    QRect cardRect(int index) const;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    bool event(QEvent *event) override;

private:
    QSize cardSize() const;
    int columns(int width) const;

    std::vector<Card> m_cards;
    std::string m_theme;
};

// Head kinds (view kind "head-kinds"; analysis/headclasses.h): every head scored for the kind the spec's `head_kind`
// names, on a repeated random sequence, the heads at or above `min_score` shown largest first as cards with their
// attention on that sequence; the hover gives every score of the head, and a click opens it in the Attention view.
class HeadKindsView : public View
{
    Q_OBJECT

public:
    explicit HeadKindsView(QWidget *parent = nullptr);

    HeadGallery *gallery() const { return m_gallery; }
    QString message() const; // drawn instead of the gallery; empty when it is drawn
    QString caption() const;
    std::vector<QWidget *> interfaceWidgets() const override { return {m_controls}; }
    QSize sizeHint() const override { return {1100, 650}; }

protected:
    void refresh() override;

private:
    void showMessage(const QString &text);

    QWidget *m_controls = nullptr;
    QComboBox *m_kind = nullptr, *m_sequence = nullptr;
    QDoubleSpinBox *m_minimum = nullptr;
    QLabel *m_formula = nullptr, *m_message = nullptr, *m_caption = nullptr;
    QScrollArea *m_scroll = nullptr;
    HeadGallery *m_gallery = nullptr;
};

} // namespace atlas

namespace atlas::views::headkinds {

std::unique_ptr<View> makeView(QWidget *parent);

} // namespace atlas::views::headkinds
