#include "tokenlines/tokenlinesview.h"
#include "tokenlines/tokenlines.h"

#include "analysis/attentionsparsity.h"

#include "views/plottheme.h"
#include "views/viewfonts.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace atlas {
namespace {

constexpr qreal kLinesMargin = 12;
constexpr qreal kAnchorGap = 6; // between a label and the end of its lines
constexpr int kMaxLabelChars = 16;

} // namespace

// Two columns of token labels with room for the lines between them, a title, the legend and a few rows, at the
// current font size.
QSize TokenLinesView::minimumSizeHint() const
{
    const QFontMetrics label(sizedFont(font(), 11)), title(sizedFont(font(), 12, true));
    return {2 * 14 * label.averageCharWidth() + 240, 3 * title.height() + 8 * label.height()};
}

TokenLinesView::TokenLinesView(QWidget *parent)
    : View(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
}

QColor TokenLinesView::headColor(int head, int heads)
{
    // Tableau 10: distinct on white and on a dark background; more heads get evenly spaced hues.
    static const QColor tab10[]
        = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
    if (heads <= 10)
        return tab10[std::clamp(head, 0, 9)];
    return QColor::fromHsvF(std::fmod(head / double(heads), 1.0), 0.7, 0.85);
}

QColor TokenLinesView::lineColor(int head, int heads) const
{
    const QColor c = headColor(head, heads);
    return m_spec.theme == "dark" ? c.lighter(140) : c;
}

const Tensor *TokenLinesView::probs() const
{
    if (!m_input.trace)
        return nullptr;
    if (const TraceEntry *e = m_input.trace->find(siteTensorName(m_input, m_spec.layer, "attn.probs")))
        return &e->tensor;
    QString problem; // a trace that keeps attention on demand: the layer recomputed once, kept with the input
    m_onDemand = findLayerTensor(m_input, m_spec.layer, "attn.probs", &problem);
    return m_onDemand.get();
}

int TokenLinesView::tokenCount() const
{
    const Tensor *a = probs();
    return a && a->rank() == 3 ? static_cast<int>(a->dim(1)) : 0;
}

int TokenLinesView::keyCount() const
{
    const Tensor *a = probs();
    return a && a->rank() == 3 ? static_cast<int>(a->dim(2)) : 0;
}

int TokenLinesView::selectedPosition() const
{
    const int t = tokenCount();
    return m_spec.position < 0 || m_spec.position >= t ? t - 1 : m_spec.position;
}

int TokenLinesView::layerHeads() const
{
    const Tensor *a = probs();
    return a && a->rank() == 3 ? static_cast<int>(a->dim(0)) : 0;
}

bool TokenLinesView::isHidden(int head) const
{
    const std::vector<int> &hidden = m_spec.get(views::tokenlines::kHiddenHeads);
    return std::find(hidden.begin(), hidden.end(), head) != hidden.end();
}

std::vector<int> TokenLinesView::headsShown() const
{
    const int heads = layerHeads();
    std::vector<int> out;
    if (m_spec.head < 0) {
        for (int h = 0; h < heads; ++h)
            if (!isHidden(h))
                out.push_back(h);
    } else if (m_spec.head < heads) {
        out.push_back(m_spec.head);
    }
    return out;
}

QString TokenLinesView::message() const
{
    const std::string name = siteTensorName(m_input, m_spec.layer, "attn.probs");
    if (!m_input.trace)
        return tr("Nothing to show yet: run the model");
    const Tensor *a = probs();
    if (!a)
        return notComputedText(m_input, name);
    if (a->rank() != 3 || (a->dim(1) != a->dim(2) && !m_input.site.cross))
        return tr("%1 has shape %2; expected [H, T, T]")
            .arg(QString::fromStdString(name), QString::fromStdString(a->shapeString()));
    if (m_spec.head >= a->dim(0))
        return tr("Layer %1 has %2 heads: there is no head %3").arg(m_spec.layer).arg(a->dim(0)).arg(m_spec.head);
    if (a->dim(1) == 0 || a->dim(2) == 0)
        return tr("The input has no tokens");
    return {};
}

TokenLinesView::Palette TokenLinesView::colors() const
{
    const ThemeColors theme = themeColors(m_spec.theme);
    return {theme.background, theme.text, theme.muted, theme.accent};
}

QString TokenLinesView::tokenLabel(Side side, int position) const
{
    QString s = side == Side::Key ? keyLabel(m_input, position) : atlas::tokenLabel(m_input, position);
    if (s.size() > kMaxLabelChars)
        s = s.left(kMaxLabelChars - 1) + QChar(0x2026);
    return s;
}

bool TokenLinesView::isPadding(Side side, int position) const
{
    if (side == Side::Key)
        return isKeyPadding(m_input, position);
    return std::find(m_input.padding.begin(), m_input.padding.end(), position) != m_input.padding.end();
}

TokenLinesView::Geometry TokenLinesView::geometry() const
{
    Geometry g;
    const QFontMetricsF label(sizedFont(font(), 11));
    const QFontMetricsF title(sizedFont(font(), 12, true));
    const QFontMetricsF small(sizedFont(font(), 10));
    const int tokens = tokenCount(), keys = keyCount();
    const int heads = layerHeads();

    qreal y = kLinesMargin + title.height() + 6;
    g.legendTop = y;
    if (m_spec.head < 0) {
        const qreal chip = small.horizontalAdvance(QStringLiteral("h00")) + 26;
        const int perRow = std::max(1, int((width() - 2 * kLinesMargin) / chip));
        y += ((heads + perRow - 1) / perRow) * (small.height() + 6) + 2;
    }
    y += small.height() + 6; // column headers
    g.top = y;

    const qreal minRow = label.height() + 2;
    qreal available = height() - kLinesMargin - y;
    int fit = std::max(1, int(available / minRow));
    const bool faint = !uniformNote().isEmpty();
    if (std::max(tokens, keys) > std::min(kMaxWindow, fit) || faint) {
        available -= (faint ? 2 : 1) * small.height() + 6; // the "showing a–b of T" note, and why the lines are faint
        fit = std::max(1, int(available / minRow));
    }
    g.count = std::min({tokens, kMaxWindow, fit});
    const int centre = selectedPosition();
    g.first = std::clamp(centre - g.count / 2, 0, std::max(0, tokens - g.count));
    if (m_input.site.cross) { // the source: its first positions (an alignment runs across all of it)
        g.keyCount = std::min({keys, kMaxWindow, fit});
        g.keyFirst = 0;
    } else {
        g.keyFirst = g.first;
        g.keyCount = g.count;
    }
    const int rows = std::max(g.count, g.keyCount);
    g.rowHeight = rows > 0 ? std::min(available / rows, label.height() * 1.9) : 0;

    qreal labelWidth = small.horizontalAdvance(tr("query (attending)")) + 4;
    for (int t = g.first; t < g.first + g.count; ++t)
        labelWidth = std::max(labelWidth, label.horizontalAdvance(tokenLabel(Side::Query, t)) + 10);
    for (int t = g.keyFirst; t < g.keyFirst + g.keyCount; ++t)
        labelWidth = std::max(labelWidth, label.horizontalAdvance(tokenLabel(Side::Key, t)) + 10);
    const qreal gap = std::clamp(width() - 2 * kLinesMargin - 2 * labelWidth, 80.0, 420.0);
    const qreal x0 = std::max(kLinesMargin, (width() - 2 * labelWidth - gap) / 2);
    g.leftLabels = QRectF(x0, g.top, labelWidth, g.count * g.rowHeight);
    g.rightLabels = QRectF(x0 + labelWidth + gap, g.top, labelWidth, g.keyCount * g.rowHeight);
    return g;
}

std::pair<int, int> TokenLinesView::tokenWindow() const
{
    const Geometry g = geometry();
    return {g.first, g.count};
}

std::pair<int, int> TokenLinesView::keyWindow() const
{
    const Geometry g = geometry();
    return {g.keyFirst, g.keyCount};
}

QRectF TokenLinesView::rowRect(const Geometry &g, Side side, int position) const
{
    const QRectF &column = side == Side::Query ? g.leftLabels : g.rightLabels;
    const int first = side == Side::Query ? g.first : g.keyFirst;
    return QRectF(column.left(), g.top + (position - first) * g.rowHeight, column.width(), g.rowHeight);
}

std::vector<TokenLinesView::Segment> TokenLinesView::segments() const
{
    std::vector<Segment> out;
    if (!message().isEmpty())
        return out;
    const Tensor &a = *probs();
    const Geometry g = geometry();
    const std::vector<int> heads = headsShown();
    const int totalHeads = static_cast<int>(a.dim(0));
    const qreal maxWidth = heads.size() == 1 ? 4.0 : 3.0;
    const int last = g.first + g.count, lastKey = g.keyFirst + g.keyCount;
    for (int h : heads) {
        const ConstMatrixMap w = a.slice(h);
        for (int q = g.first; q < last; ++q) {
            if (m_hoverSide == Side::Query && q != m_hoverPos)
                continue;
            for (int k = g.keyFirst; k < lastKey; ++k) {
                const float weight = w(q, k);
                if (!(weight >= kMinWeight) || (m_hoverSide == Side::Key && k != m_hoverPos))
                    continue;
                Segment s {q, k, h, weight, 0, 0.0, lineColor(h, totalHeads), {}};
                s.alpha = std::clamp(int(std::lround(255.0 * weight)), 1, 255);
                s.width = 0.75 + (maxWidth - 0.75) * std::min(weight, 1.0f);
                s.color.setAlpha(s.alpha);
                s.line
                    = QLineF(rowRect(g, Side::Query, q).right() + kAnchorGap, rowRect(g, Side::Query, q).center().y(),
                        rowRect(g, Side::Key, k).left() - kAnchorGap, rowRect(g, Side::Key, k).center().y());
                out.push_back(s);
            }
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const Segment &a, const Segment &b) { return a.weight < b.weight; });
    return out;
}

// The mean weight (over the heads shown) between `position` on `side` and the hovered token on the other side.
float TokenLinesView::partnerWeight(int position) const
{
    const Tensor *a = probs();
    const std::vector<int> heads = headsShown();
    if (!a || heads.empty() || m_hoverPos < 0)
        return 0.0f;
    float sum = 0.0f;
    for (int h : heads) {
        const ConstMatrixMap w = a->slice(h);
        sum += m_hoverSide == Side::Query ? w(m_hoverPos, position) : w(position, m_hoverPos);
    }
    return sum / heads.size();
}

void TokenLinesView::paintHeader(QPainter &p, const Geometry &g, const Palette &pal) const
{
    const std::vector<int> heads = headsShown();
    const QString which = m_spec.head >= 0  ? tr("head %1").arg(m_spec.head)
        : int(heads.size()) == layerHeads() ? tr("all %1 heads").arg(heads.size())
                                            : tr("%1 of %2 heads").arg(heads.size()).arg(layerHeads());
    p.setFont(sizedFont(font(), 12, true));
    p.setPen(pal.text);
    const QRectF titleRect(kLinesMargin, kLinesMargin, width() - 2 * kLinesMargin, g.legendTop - kLinesMargin);
    const QString site = siteTitle(m_input);
    const QString title = site.isEmpty() ? tr("Attention lines · layer %1 · %2").arg(m_spec.layer).arg(which)
                                         : tr("%1 lines · layer %2 · %3").arg(site).arg(m_spec.layer).arg(which);
    p.drawText(titleRect, Qt::AlignLeft | Qt::AlignTop, title);
    const qreal titleWidth = QFontMetricsF(p.font()).horizontalAdvance(title);
    p.setFont(sizedFont(font(), 10));
    p.setPen(pal.muted);
    const QString hint = m_spec.head < 0 ? tr("click a swatch to hide or show its head; hover a token to isolate it")
                                         : tr("hover a token to isolate its lines");
    if (titleWidth + QFontMetricsF(p.font()).horizontalAdvance(hint) + 24 < titleRect.width())
        p.drawText(titleRect, Qt::AlignRight | Qt::AlignTop, hint);

    const QFontMetricsF small(p.font());
    const qreal y = g.top - small.height() - 4;
    p.drawText(QRectF(g.leftLabels.left(), y, g.leftLabels.width(), small.height()), Qt::AlignRight | Qt::AlignVCenter,
        m_input.site.cross ? tr("decoder query") : tr("query (attending)"));
    p.drawText(QRectF(g.rightLabels.left(), y, g.rightLabels.width() + kLinesMargin, small.height()),
        Qt::AlignLeft | Qt::AlignVCenter, m_input.site.cross ? tr("source key") : tr("key (attended)"));

    const int tokens = tokenCount(), keys = keyCount();
    QString note;
    if (g.count < tokens)
        note = tr("Showing tokens %1–%2 of %3 · click a token to move the window")
                   .arg(g.first)
                   .arg(g.first + g.count - 1)
                   .arg(tokens);
    if (g.keyCount < keys && m_input.site.cross)
        note += (note.isEmpty() ? QString() : QStringLiteral(" · "))
            + tr("source %1–%2 of %3").arg(g.keyFirst).arg(g.keyFirst + g.keyCount - 1).arg(keys);
    if (const QString uniform = uniformNote(); !uniform.isEmpty())
        note += (note.isEmpty() ? QString() : QStringLiteral(" · ")) + uniform;
    if (!note.isEmpty()) // two lines at most (geometry keeps them)
        p.drawText(QRectF(kLinesMargin, height() - kLinesMargin - 2 * small.height(), width() - 2 * kLinesMargin,
                       2 * small.height()),
            Qt::AlignHCenter | Qt::AlignBottom | Qt::TextWordWrap, note);
}

// Why the lines are faint when they are (a line's opacity is its weight): the rows spread their weight nearly evenly.
QString TokenLinesView::uniformNote() const
{
    if (!message().isEmpty())
        return {};
    const Tensor &a = *probs();
    double largest = 0, even = 0;
    const std::vector<int> heads = headsShown();
    for (int h : heads) {
        const RowPeaks peaks = rowPeaks(a.slice(h).data(), int(a.dim(1)), int(a.dim(2)), kMinWeight);
        largest += peaks.meanLargest / double(heads.size());
        even += peaks.meanEven / double(heads.size());
    }
    if (heads.empty() || largest >= 2 * even)
        return {};
    return tr("Nearly uniform attention: a row's largest weight is %1 on average, an even split %2, so every line is "
              "faint (the Attention tab shows the weights on a colour scale)")
        .arg(formatNumber(largest, 2), formatNumber(even, 2));
}

QRectF TokenLinesView::legendChip(const Geometry &g, int head) const
{
    const QFontMetricsF small(sizedFont(font(), 10));
    const qreal chip = small.horizontalAdvance(QStringLiteral("h00")) + 26;
    const int perRow = std::max(1, int((width() - 2 * kLinesMargin) / chip));
    return QRectF(kLinesMargin + (head % perRow) * chip, g.legendTop + (head / perRow) * (small.height() + 6), chip,
        small.height());
}

// A swatch per head of the layer, BertViz's: a hidden head's is an empty outline and its name muted.
void TokenLinesView::paintLegend(QPainter &p, const Geometry &g, const Palette &pal) const
{
    if (m_spec.head >= 0)
        return;
    p.setFont(sizedFont(font(), 10));
    const int heads = layerHeads();
    for (int h = 0; h < heads; ++h) {
        const QRectF chip = legendChip(g, h);
        const qreal box = chip.height() * 0.7;
        const QRectF swatch(chip.left(), chip.top() + (chip.height() - box) / 2, box, box);
        const QColor color = lineColor(h, heads);
        if (isHidden(h)) {
            p.setPen(QPen(color, 1.5));
            p.setBrush(Qt::NoBrush);
            p.drawRect(swatch.adjusted(0.75, 0.75, -0.75, -0.75));
        } else {
            p.fillRect(swatch, color);
        }
        p.setPen(isHidden(h) ? pal.muted : pal.text);
        p.drawText(chip.adjusted(box + 5, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("h%1").arg(h));
    }
}

int TokenLinesView::legendHeadAt(const QPointF &point) const
{
    if (m_spec.head >= 0 || !message().isEmpty())
        return -1;
    const Geometry g = geometry();
    for (int h = 0; h < layerHeads(); ++h)
        if (legendChip(g, h).contains(point))
            return h;
    return -1;
}

void TokenLinesView::toggleHead(int head)
{
    std::vector<int> hidden = m_spec.get(views::tokenlines::kHiddenHeads);
    if (isHidden(head))
        std::erase(hidden, head);
    else
        hidden.push_back(head);
    std::sort(hidden.begin(), hidden.end());
    m_spec.set(views::tokenlines::kHiddenHeads, hidden);
    update();
    emit specEdited(m_spec);
}

void TokenLinesView::paintLabels(QPainter &p, const Geometry &g, const Palette &pal) const
{
    const QFont normal = sizedFont(font(), 11);
    QFont pad = normal;
    pad.setItalic(true);
    const QColor accent = m_spec.head >= 0 ? lineColor(m_spec.head, int(probs()->dim(0))) : pal.highlight;
    for (Side side : {Side::Query, Side::Key}) {
        const int first = side == Side::Query ? g.first : g.keyFirst;
        for (int t = first; t < first + (side == Side::Query ? g.count : g.keyCount); ++t) {
            const QRectF r = rowRect(g, side, t).adjusted(0, 1, 0, -1);
            const bool hovered = m_hoverSide == side && m_hoverPos == t;
            const float tint = m_hoverSide != Side::None && m_hoverSide != side ? partnerWeight(t) : 0.0f;
            if (hovered || tint > 0.0f) {
                QColor c = accent;
                c.setAlpha(hovered ? 90 : int(170 * std::min(tint, 1.0f)));
                p.setPen(hovered ? QPen(accent, 1.5) : Qt::NoPen);
                p.setBrush(c);
                p.drawRoundedRect(r, 4, 4);
            }
            p.setFont(isPadding(side, t) ? pad : normal);
            p.setPen(isPadding(side, t) ? pal.muted : pal.text);
            const Qt::Alignment align = (side == Side::Query ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter;
            p.drawText(r.adjusted(5, 0, -5, 0), align, tokenLabel(side, t));
        }
    }
}

void TokenLinesView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.setRenderHint(QPainter::TextAntialiasing);
    const Palette pal = colors();
    p.fillRect(rect(), pal.background);

    if (const QString text = message(); !text.isEmpty()) {
        p.setFont(sizedFont(font(), 12));
        p.setPen(pal.muted);
        p.drawText(rect().adjusted(20, 20, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, text);
        return;
    }
    const Geometry g = geometry();
    paintHeader(p, g, pal);
    paintLegend(p, g, pal);
    for (const Segment &s : segments()) {
        p.setPen(QPen(s.color, s.width, Qt::SolidLine, Qt::RoundCap));
        p.drawLine(s.line);
    }
    paintLabels(p, g, pal);
}

std::pair<TokenLinesView::Side, int> TokenLinesView::hitTest(const QPointF &point) const
{
    if (!message().isEmpty())
        return {Side::None, -1};
    const Geometry g = geometry();
    if (g.rowHeight <= 0 || point.y() < g.top || point.x() < g.leftLabels.left() - 20
        || point.x() > g.rightLabels.right() + 20)
        return {Side::None, -1};
    const int row = int((point.y() - g.top) / g.rowHeight);
    const qreal middle = (g.leftLabels.right() + g.rightLabels.left()) / 2;
    const Side side = point.x() < middle ? Side::Query : Side::Key;
    if (row >= (side == Side::Query ? g.count : g.keyCount))
        return {Side::None, -1};
    return {side, (side == Side::Query ? g.first : g.keyFirst) + row};
}

void TokenLinesView::setHover(Side side, int position)
{
    if (side == Side::None || position < 0 || position >= (side == Side::Query ? tokenCount() : keyCount())) {
        side = Side::None;
        position = -1;
    }
    if (side == m_hoverSide && position == m_hoverPos)
        return;
    m_hoverSide = side;
    m_hoverPos = position;
    update();
}

void TokenLinesView::mouseMoveEvent(QMouseEvent *event)
{
    const auto [side, position] = hitTest(event->position());
    setHover(side, position);
    const int head = legendHeadAt(event->position());
    const QString text = head >= 0
        ? (isHidden(head) ? tr("Click to show head %1's lines") : tr("Click to hide head %1's lines")).arg(head)
        : side == Side::None ? QString()
                             : hoverText();
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

// The hovered token's strongest partners on the other side, with the weight the lines draw (the mean over the
// heads shown).
QString TokenLinesView::hoverText() const
{
    const Tensor *a = probs();
    const bool query = m_hoverSide == Side::Query;
    if (!a || m_hoverPos < 0 || m_hoverPos >= a->dim(query ? 1 : 2))
        return {};
    const int partnersCount = int(a->dim(query ? 2 : 1));
    std::vector<std::pair<float, int>> partners;
    for (int t = 0; t < partnersCount; ++t)
        partners.emplace_back(partnerWeight(t), t);
    const size_t shown = std::min<size_t>(3, partners.size());
    std::partial_sort(partners.begin(), partners.begin() + int64_t(shown), partners.end(),
        [](auto &x, auto &y) { return x.first > y.first || (x.first == y.first && x.second < y.second); });
    const Side other = query ? Side::Key : Side::Query;
    QString text = (query ? tr("query %1 '%2' attends most to:") : tr("key %1 '%2' is read most by:"))
                       .arg(m_hoverPos)
                       .arg(tokenLabel(m_hoverSide, m_hoverPos));
    for (size_t i = 0; i < shown; ++i)
        text += QStringLiteral("\n  %1 '%2': %3")
                    .arg(partners[i].second)
                    .arg(tokenLabel(other, partners[i].second))
                    .arg(formatNumber(partners[i].first));
    if (headsShown().size() > 1)
        text += tr("\n(mean weight over the %1 heads shown)").arg(headsShown().size());
    return text;
}

void TokenLinesView::mousePressEvent(QMouseEvent *event)
{
    if (const int head = legendHeadAt(event->position()); head >= 0 && event->button() == Qt::LeftButton)
        return toggleHead(head);
    const auto [side, position] = hitTest(event->position());
    if (side == Side::None || event->button() != Qt::LeftButton || position == m_spec.position
        || (side == Side::Key && m_input.site.cross)) // a source position is no query
        return;
    m_spec.position = position;
    update();
    emit specEdited(m_spec);
}

void TokenLinesView::leaveEvent(QEvent *)
{
    setHover(Side::None, -1);
}

void TokenLinesView::refresh()
{
    if (m_hoverPos >= (m_hoverSide == Side::Query ? tokenCount() : keyCount()))
        setHover(Side::None, -1);
    update();
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::tokenlines::makeView(QWidget *parent)
{
    return std::make_unique<TokenLinesView>(parent);
}
