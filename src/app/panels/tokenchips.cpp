#include "panels/tokenchips.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace atlas {

namespace {
constexpr int kGap = 4;
constexpr int kMaxChips = 512; // beyond this the chips would be unreadable; the views still show everything
} // namespace

TokenChips::TokenChips(QWidget *parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    setMouseTracking(true);
}

void TokenChips::setTokens(const QStringList &pieces, const std::vector<int> &ids, const std::vector<int> &padding)
{
    m_pieces = pieces;
    m_ids = ids;
    m_padding = padding;
    updateGeometry();
    update();
}

std::vector<QRect> TokenChips::layoutChips(int width) const
{
    const QFontMetrics fm(font());
    const int h = fm.height() * 2 + 6;
    std::vector<QRect> rects;
    int x = 0, y = 0;
    const int n = std::min<int>(static_cast<int>(m_pieces.size()), kMaxChips);
    for (int i = 0; i < n; ++i) {
        const int w = std::max(fm.horizontalAdvance(m_pieces[i]), fm.horizontalAdvance(QString::number(m_ids[i]))) + 12;
        if (x > 0 && x + w > width) {
            x = 0;
            y += h + kGap;
        }
        rects.emplace_back(x, y, w, h);
        x += w + kGap;
    }
    return rects;
}

int TokenChips::heightForWidth(int width) const
{
    const auto rects = layoutChips(width);
    return rects.empty() ? QFontMetrics(font()).height() * 2 + 6 : rects.back().bottom() + 1;
}

QSize TokenChips::sizeHint() const
{
    return {400, heightForWidth(400)};
}

void TokenChips::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const auto rects = layoutChips(width());
    const QPalette pal = palette();
    for (size_t i = 0; i < rects.size(); ++i) {
        const bool pad = std::find(m_padding.begin(), m_padding.end(), int(i)) != m_padding.end();
        p.setPen(pal.color(QPalette::Mid));
        p.setBrush(pad ? QBrush(pal.color(QPalette::Mid), Qt::BDiagPattern) : pal.brush(QPalette::AlternateBase));
        p.drawRoundedRect(rects[i].adjusted(0, 0, -1, -1), 5, 5);
        const QRect top = rects[i].adjusted(0, 2, 0, -rects[i].height() / 2);
        const QRect bottom = rects[i].adjusted(0, rects[i].height() / 2, 0, -2);
        p.setPen(pal.color(QPalette::Text));
        p.drawText(top, Qt::AlignCenter, m_pieces[int(i)]);
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(bottom, Qt::AlignCenter, QString::number(m_ids[i]));
    }
    if (m_pieces.size() > kMaxChips) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(
            rect(), Qt::AlignBottom | Qt::AlignRight, tr("… and %1 more tokens").arg(m_pieces.size() - kMaxChips));
    }
}

void TokenChips::mousePressEvent(QMouseEvent *event)
{
    const auto rects = layoutChips(width());
    for (size_t i = 0; i < rects.size(); ++i)
        if (rects[i].contains(event->position().toPoint()))
            emit chipClicked(static_cast<int>(i));
}

bool TokenChips::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const auto rects = layoutChips(width());
        for (size_t i = 0; i < rects.size(); ++i)
            if (rects[i].contains(help->pos())) {
                QToolTip::showText(help->globalPos(),
                    tr("Position %1: %2 (id %3)\nClick to toggle padding (no query attends a padding key)")
                        .arg(i)
                        .arg(m_pieces[int(i)])
                        .arg(m_ids[i]),
                    this);
                return true;
            }
        QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace atlas
