#include "views/fillcards.h"

#include "viewmodel/viewinput.h"
#include "views/palette.h"
#include "views/viewfonts.h"

#include <QPainter>

#include <algorithm>

namespace atlas {

namespace {

constexpr int kGap = 10, kPad = 6;
const QColor &kOriginalBar = palette::original; // the token that belongs there

} // namespace

FillCards::FillCards(QWidget *parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
}

void FillCards::setCards(std::vector<Card> cards)
{
    m_cards = std::move(cards);
    updateGeometry();
    update();
}

QSize FillCards::cardSize() const
{
    const QFontMetrics fm(font());
    size_t rows = 0;
    for (const Card &c : m_cards)
        rows = std::max(rows, c.rows.size());
    // header, context, the bars, footer
    return {fm.averageCharWidth() * 30 + 2 * kPad, fm.height() * int(rows + 3) + int(rows) * 3 + 3 * kPad};
}

int FillCards::columns(int width) const
{
    return std::max(1, (width + kGap) / (cardSize().width() + kGap));
}

QRect FillCards::cardRect(int index) const
{
    const QSize size = cardSize();
    const int n = columns(width());
    return {(index % n) * (size.width() + kGap), (index / n) * (size.height() + kGap), size.width(), size.height()};
}

int FillCards::heightForWidth(int width) const
{
    if (m_cards.empty())
        return 0;
    const int rows = (int(m_cards.size()) + columns(width) - 1) / columns(width);
    return rows * (cardSize().height() + kGap) - kGap;
}

QSize FillCards::sizeHint() const
{
    const int w = std::min(int(m_cards.size()), 4) * (cardSize().width() + kGap);
    return {std::max(w, 100), heightForWidth(std::max(w, 100))};
}

QSize FillCards::minimumSizeHint() const
{
    return {cardSize().width(), std::max(cardSize().height(), heightForWidth(width()))};
}

void FillCards::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    updateGeometry(); // the rows the cards need follow the width
}

void FillCards::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    for (size_t i = 0; i < m_cards.size(); ++i)
        paintCard(p, m_cards[i], cardRect(int(i)));
}

// The tokens around the position, the one the model read there boxed in the card's colour in the middle.
void FillCards::paintContext(QPainter &p, const Card &card, const QRect &r) const
{
    const QFont bold = relativeFont(font(), 1.0, true);
    const QFontMetrics fm(font()), boldMetrics(bold);
    const QString hidden = boldMetrics.elidedText(card.hidden, Qt::ElideRight, r.width() / 2);
    const int hiddenWidth = boldMetrics.horizontalAdvance(hidden) + 6;
    const int side = (r.width() - hiddenWidth) / 2;
    const QString before = fm.elidedText(card.before, Qt::ElideLeft, side);
    const QString after = fm.elidedText(card.after, Qt::ElideRight, side);
    const int x = r.left() + side - fm.horizontalAdvance(before);
    p.setFont(font());
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(x, r.top(), side, r.height()), Qt::AlignLeft | Qt::AlignVCenter, before);
    const QRect box(r.left() + side, r.top(), hiddenWidth, r.height());
    p.fillRect(box, card.fill.isValid() ? card.fill : palette().color(QPalette::Highlight));
    p.setFont(bold);
    p.setPen(palette::inkOn(card.fill.isValid() ? card.fill : palette().color(QPalette::Highlight)));
    p.drawText(box, Qt::AlignCenter, hidden);
    p.setFont(font());
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(box.right() + 1, r.top(), side, r.height()), Qt::AlignLeft | Qt::AlignVCenter, after);
}

void FillCards::paintCard(QPainter &p, const Card &card, const QRect &r) const
{
    const QPalette pal = palette();
    const QFontMetrics fm(font());
    const int line = fm.height();
    p.setPen(pal.color(QPalette::Mid));
    p.setBrush(pal.brush(QPalette::Base));
    p.drawRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
    const QRect header(r.left(), r.top(), r.width(), line + kPad);
    p.setPen(Qt::NoPen);
    p.setBrush(card.fill.isValid() ? card.fill : pal.color(QPalette::AlternateBase));
    p.drawRoundedRect(QRectF(header).adjusted(1, 1, -1, 0), 5, 5);
    const QFont bold = relativeFont(font(), 1.0, true);
    const QFontMetrics boldMetrics(bold);
    p.setFont(bold);
    p.setPen(card.fill.isValid() ? palette::inkOn(card.fill) : pal.color(QPalette::Text));
    const QRect inner = r.adjusted(kPad, 0, -kPad, 0);
    p.drawText(QRect(inner.left(), header.top(), inner.width(), header.height()), Qt::AlignVCenter | Qt::AlignLeft,
        boldMetrics.elidedText(card.title, Qt::ElideRight, inner.width()));
    int y = header.bottom() + kPad / 2;
    paintContext(p, card, QRect(inner.left(), y, inner.width(), line));
    y += line + kPad / 2;
    // The percentages keep three significant digits ("0.0346 %"): the column is as wide as the widest, bold or not.
    const int labelWidth = fm.averageCharWidth() * 7;
    int percentWidth = fm.horizontalAdvance(QStringLiteral("100.0 %"));
    for (const Row &row : card.rows)
        percentWidth = std::max(percentWidth, boldMetrics.horizontalAdvance(formatPercent(row.probability)));
    const int barWidth = inner.width() - labelWidth - percentWidth - 2 * kPad;
    for (const Row &row : card.rows) {
        p.setFont(relativeFont(font(), 1.0, row.original));
        p.setPen(pal.color(QPalette::Text));
        p.drawText(QRect(inner.left(), y, labelWidth, line), Qt::AlignLeft | Qt::AlignVCenter,
            fm.elidedText(row.label, Qt::ElideRight, labelWidth));
        const int w = std::max(1, int(barWidth * std::clamp(row.probability, 0.0, 1.0)));
        p.fillRect(QRect(inner.left() + labelWidth + kPad, y + 2, w, line - 4),
            row.original ? kOriginalBar : pal.color(QPalette::Highlight));
        p.drawText(QRect(inner.right() - percentWidth, y, percentWidth, line), Qt::AlignRight | Qt::AlignVCenter,
            formatPercent(row.probability));
        y += line + 3;
    }
    p.setFont(relativeFont(font(), 0.9));
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(QRect(inner.left(), r.bottom() - line - kPad / 2, inner.width(), line), Qt::AlignLeft | Qt::AlignVCenter,
        fm.elidedText(card.footer, Qt::ElideRight, inner.width()));
}

} // namespace atlas
