#include "views/patterntokenstrip.h"

#include "views/viewfonts.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPaintEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace atlas {

namespace {

constexpr int kGap = 3;
constexpr int kLabelChars = 8;
const QColor kGlobalFill(0xf2, 0x8e, 0x2b); // Tableau orange: stands out from every colour map's ends

QString chipText(const QString &label)
{
    return label.size() <= kLabelChars ? label : label.left(kLabelChars - 1) + QChar(0x2026);
}

} // namespace

PatternTokenStrip::PatternTokenStrip(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

int PatternTokenStrip::chipHeight() const
{
    return QFontMetrics(font()).height() * 2 + 4;
}

void PatternTokenStrip::setTokens(const QStringList &labels, const std::vector<int> &padding)
{
    std::vector<unsigned char> isPadding(size_t(labels.size()), 0);
    for (int p : padding)
        if (p >= 0 && p < labels.size())
            isPadding[size_t(p)] = 1;
    if (labels == m_labels && isPadding == m_padding)
        return;
    m_labels = labels;
    m_padding = std::move(isPadding);
    const QFontMetrics fm(font());
    const QFontMetrics small(sizedFont(font(), font().pointSizeF() * 0.8));
    m_left.assign(size_t(labels.size()) + 1, 0);
    for (int t = 0; t < labels.size(); ++t) {
        const int w = std::max(fm.horizontalAdvance(chipText(labels[t])), small.horizontalAdvance(QString::number(t)));
        m_left[size_t(t) + 1] = m_left[size_t(t)] + std::max(w + 10, 22) + kGap;
    }
    m_global.assign(size_t(labels.size()), 0);
    resize(sizeHint());
    updateGeometry();
    update();
}

void PatternTokenStrip::setGlobal(const std::vector<int> &positions)
{
    std::fill(m_global.begin(), m_global.end(), 0);
    for (int p : positions)
        if (p >= 0 && p < int(m_global.size()))
            m_global[size_t(p)] = 1;
    update();
}

void PatternTokenStrip::setClickable(bool clickable, const QString &why)
{
    m_clickable = clickable;
    m_why = why;
    setCursor(clickable ? Qt::PointingHandCursor : Qt::ArrowCursor);
}

bool PatternTokenStrip::isGlobal(int position) const
{
    return position >= 0 && position < int(m_global.size()) && m_global[size_t(position)];
}

QRect PatternTokenStrip::chipRect(int t) const
{
    return QRect(m_left[size_t(t)], 1, m_left[size_t(t) + 1] - m_left[size_t(t)] - kGap, chipHeight());
}

int PatternTokenStrip::chipAt(const QPoint &pos) const
{
    const auto it = std::upper_bound(m_left.begin(), m_left.end(), pos.x());
    const int t = int(it - m_left.begin()) - 1;
    return t >= 0 && t < m_labels.size() && chipRect(t).contains(pos) ? t : -1;
}

QSize PatternTokenStrip::sizeHint() const
{
    return {std::max(1, m_left.empty() ? 1 : m_left.back()), chipHeight() + 2};
}

void PatternTokenStrip::paintEvent(QPaintEvent *event)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette pal = palette();
    const QFont small = sizedFont(font(), font().pointSizeF() * 0.8);
    const int first
        = std::max(0, int(std::upper_bound(m_left.begin(), m_left.end(), event->rect().left()) - m_left.begin()) - 1);
    for (int t = first; t < m_labels.size() && m_left[size_t(t)] <= event->rect().right(); ++t) {
        const QRect r = chipRect(t);
        const bool global = m_global[size_t(t)];
        p.setPen(global ? kGlobalFill.darker(130) : pal.color(QPalette::Mid));
        p.setBrush(global              ? QBrush(kGlobalFill)
                : m_padding[size_t(t)] ? QBrush(pal.color(QPalette::Mid), Qt::BDiagPattern)
                                       : pal.brush(QPalette::AlternateBase));
        p.drawRoundedRect(QRectF(r).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4);
        p.setPen(global ? QColor(Qt::black) : pal.color(QPalette::Text));
        p.setFont(sizedFont(font(), font().pointSizeF(), global));
        p.drawText(r.adjusted(0, 1, 0, -r.height() / 2), Qt::AlignCenter, chipText(m_labels[t]));
        p.setPen(global ? QColor(Qt::black) : pal.color(QPalette::PlaceholderText));
        p.setFont(small);
        p.drawText(r.adjusted(0, r.height() / 2, 0, -1), Qt::AlignCenter, QString::number(t));
    }
}

void PatternTokenStrip::mousePressEvent(QMouseEvent *event)
{
    const int t = chipAt(event->position().toPoint());
    if (t >= 0 && m_clickable)
        emit chipClicked(t);
}

bool PatternTokenStrip::event(QEvent *event)
{
    if (event->type() != QEvent::ToolTip)
        return QWidget::event(event);
    auto *help = static_cast<QHelpEvent *>(event);
    const int t = chipAt(help->pos());
    if (t < 0) {
        QToolTip::hideText();
        return true;
    }
    QString text = tr("Position %1: %2").arg(t).arg(m_labels[t]);
    if (m_padding[size_t(t)])
        text += tr("\nPadding: no query attends it");
    text += isGlobal(t) ? tr("\nGlobal: attends every key, and every query attends it") : QString();
    text += m_clickable ? tr("\nClick to toggle it global") : "\n" + m_why;
    QToolTip::showText(help->globalPos(), text, this);
    return true;
}

} // namespace atlas
