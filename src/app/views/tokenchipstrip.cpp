#include "views/tokenchipstrip.h"

#include "views/palette.h"
#include "views/viewfonts.h"

#include <QHash>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace atlas {

namespace {

constexpr int kChipGap = 4; // between two chips, and two rows of them
const QColor &kHighlightFill = palette::tableauOrange; // stands out from every colour map's ends

std::vector<unsigned char> flags(int count, const std::vector<int> &positions)
{
    std::vector<unsigned char> out(size_t(std::max(0, count)), 0);
    for (int p : positions)
        if (p >= 0 && p < count)
            out[size_t(p)] = 1;
    return out;
}

} // namespace

TokenChipStrip::TokenChipStrip(Layout layout, QWidget *parent)
    : QWidget(parent)
    , m_layout(layout)
{
    setMouseTracking(true);
    setSizePolicy(layout == Layout::Wrap ? QSizePolicy::Preferred : QSizePolicy::Fixed,
        layout == Layout::Wrap ? QSizePolicy::Preferred : QSizePolicy::Fixed);
}

int TokenChipStrip::chipHeight() const
{
    return QFontMetrics(font()).height() * 2 + 6;
}

QString TokenChipStrip::chipText(int t) const
{
    const QString &label = m_labels[t];
    if (m_layout == Layout::Wrap || label.size() <= kRowLabelChars)
        return label;
    return label.left(kRowLabelChars - 1) + QChar(0x2026);
}

QString TokenChipStrip::secondLine(int t) const
{
    if (size_t(t) < m_marks.size() && !m_marks[size_t(t)].secondLine.isEmpty())
        return m_marks[size_t(t)].secondLine;
    return QString::number(m_ids.empty() ? t : m_ids[size_t(t)]);
}

void TokenChipStrip::setTokens(const QStringList &labels, const std::vector<int> &ids, const std::vector<int> &padding)
{
    std::vector<unsigned char> isPadding = flags(int(labels.size()), padding);
    const std::vector<int> shownIds = ids.size() == size_t(labels.size()) ? ids : std::vector<int> {};
    if (labels == m_labels && shownIds == m_ids && isPadding == m_padding)
        return;
    m_labels = labels;
    m_ids = shownIds;
    m_padding = std::move(isPadding);
    m_highlighted.assign(size_t(labels.size()), 0);
    m_marks.clear();
    relayout();
}

void TokenChipStrip::setMarks(std::vector<ChipMark> marks)
{
    if (marks.size() != size_t(m_labels.size()))
        marks.clear();
    m_marks = std::move(marks);
    relayout(); // a second line may widen a chip
}

void TokenChipStrip::setHighlighted(const std::vector<int> &positions)
{
    m_highlighted = flags(int(m_labels.size()), positions);
    update();
}

void TokenChipStrip::setClickHint(bool clickable, const QString &hint)
{
    m_clickable = clickable;
    m_hint = hint;
    setCursor(clickable ? Qt::PointingHandCursor : Qt::ArrowCursor);
}

bool TokenChipStrip::isHighlighted(int position) const
{
    return position >= 0 && position < int(m_highlighted.size()) && m_highlighted[size_t(position)];
}

void TokenChipStrip::measureChips()
{
    const QFontMetrics fm(font());
    const QFontMetrics small(relativeFont(font(), 0.8));
    const int n = m_layout == Layout::Wrap ? std::min<int>(int(m_labels.size()), kMaxWrapped) : int(m_labels.size());
    // Texts repeat (a token and its id recur through a text): each distinct one is shaped once.
    QHash<QString, int> measured[2];
    const auto advance = [&](const QFontMetrics &metrics, QHash<QString, int> &known, const QString &text) {
        const auto it = known.constFind(text);
        return it != known.cend() ? *it : *known.insert(text, metrics.horizontalAdvance(text));
    };
    m_widths.resize(size_t(n));
    for (int t = 0; t < n; ++t)
        m_widths[size_t(t)]
            = std::max({advance(fm, measured[0], chipText(t)), advance(small, measured[1], secondLine(t)), 10}) + 12;
    m_lastHeight = {-1, 0};
}

std::vector<QRect> TokenChipStrip::layoutChips(int width) const
{
    const int h = chipHeight();
    std::vector<QRect> rects;
    rects.reserve(m_widths.size());
    int x = 0, y = 0;
    for (const int w : m_widths) {
        if (m_layout == Layout::Wrap && x > 0 && x + w > width) {
            x = 0;
            y += h + kChipGap;
        }
        rects.emplace_back(x, y + 1, w, h);
        x += w + kChipGap;
    }
    return rects;
}

void TokenChipStrip::relayout()
{
    measureChips();
    m_rects = layoutChips(width());
    if (m_layout == Layout::Row)
        resize(sizeHint());
    updateGeometry();
    update();
}

void TokenChipStrip::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    if (m_layout == Layout::Wrap)
        m_rects = layoutChips(width());
}

QRect TokenChipStrip::chipRect(int position) const
{
    return position >= 0 && size_t(position) < m_rects.size() ? m_rects[size_t(position)] : QRect();
}

int TokenChipStrip::chipAt(const QPoint &pos) const
{
    for (size_t t = 0; t < m_rects.size(); ++t)
        if (m_rects[t].contains(pos))
            return int(t);
    return -1;
}

int TokenChipStrip::heightForWidth(int width) const
{
    if (m_lastHeight.first != width) {
        const std::vector<QRect> rects = layoutChips(width);
        m_lastHeight = {width, rects.empty() ? chipHeight() + 2 : rects.back().bottom() + 2};
    }
    return m_lastHeight.second;
}

void TokenChipStrip::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        relayout();
}

QSize TokenChipStrip::sizeHint() const
{
    if (m_layout == Layout::Wrap)
        return {400, heightForWidth(400)};
    return {std::max(1, m_rects.empty() ? 1 : m_rects.back().right() + 1), chipHeight() + 2};
}

QSize TokenChipStrip::minimumSizeHint() const
{
    return m_layout == Layout::Row ? sizeHint() : QSize(40, chipHeight() + 2);
}

void TokenChipStrip::paintEvent(QPaintEvent *event)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette pal = palette();
    const QFont small = relativeFont(font(), 0.8);
    // Row: the chips are ordered by x, so the first exposed one is found by bisection.
    const auto first = m_layout == Layout::Row ? std::lower_bound(m_rects.begin(), m_rects.end(), event->rect().left(),
                           [](const QRect &r, int x) { return r.right() < x; })
                                               : m_rects.begin();
    for (auto it = first; it != m_rects.end(); ++it) {
        if (m_layout == Layout::Row && it->left() > event->rect().right())
            break;
        if (!it->intersects(event->rect())) // a wrapped strip in a scroll area shows a few of its rows
            continue;
        const int t = int(it - m_rects.begin());
        const QRect &r = *it;
        const QColor fill = m_highlighted[size_t(t)] ? kHighlightFill
            : size_t(t) < m_marks.size()             ? m_marks[size_t(t)].fill
                                                     : QColor();
        const bool highlighted = fill.isValid();
        p.setPen(highlighted ? fill.darker(130) : pal.color(QPalette::Mid));
        p.setBrush(highlighted         ? QBrush(fill)
                : m_padding[size_t(t)] ? QBrush(pal.color(QPalette::Mid), Qt::BDiagPattern)
                                       : pal.brush(QPalette::AlternateBase));
        p.drawRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5);
        p.setPen(highlighted ? palette::inkOn(fill) : pal.color(QPalette::Text));
        p.setFont(relativeFont(font(), 1.0, highlighted));
        p.drawText(r.adjusted(0, 2, 0, -r.height() / 2), Qt::AlignCenter, chipText(t));
        p.setPen(highlighted ? palette::inkOn(fill) : pal.color(QPalette::PlaceholderText));
        p.setFont(small);
        p.drawText(r.adjusted(0, r.height() / 2, 0, -2), Qt::AlignCenter, secondLine(t));
    }
    if (m_layout == Layout::Wrap && m_labels.size() > kMaxWrapped) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.setFont(font());
        p.drawText(
            rect(), Qt::AlignBottom | Qt::AlignRight, tr("… and %1 more tokens").arg(m_labels.size() - kMaxWrapped));
    }
}

void TokenChipStrip::mousePressEvent(QMouseEvent *event)
{
    const int t = chipAt(event->position().toPoint());
    if (t >= 0 && m_clickable)
        emit chipClicked(t);
}

bool TokenChipStrip::event(QEvent *event)
{
    if (event->type() != QEvent::ToolTip)
        return QWidget::event(event);
    auto *help = static_cast<QHelpEvent *>(event);
    const int t = chipAt(help->pos());
    if (t < 0) {
        QToolTip::hideText();
        return true;
    }
    QString text = m_ids.empty() ? tr("Position %1: %2").arg(t).arg(m_labels[t])
                                 : tr("Position %1: %2 (id %3)").arg(t).arg(m_labels[t]).arg(m_ids[size_t(t)]);
    if (m_padding[size_t(t)])
        text += tr("\nPadding: no query attends it");
    if (isHighlighted(t))
        text += tr("\nGlobal: attends every key, and every query attends it");
    if (size_t(t) < m_marks.size() && !m_marks[size_t(t)].note.isEmpty())
        text += "\n" + m_marks[size_t(t)].note;
    if (!m_hint.isEmpty())
        text += "\n" + m_hint;
    QToolTip::showText(help->globalPos(), text, this);
    return true;
}

} // namespace atlas
