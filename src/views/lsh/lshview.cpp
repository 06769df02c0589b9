#include "lsh/lshview.h"

#include "trace/names.h"

#include "views/plottheme.h"

#include "util/error.h"
#include "views/colormaps.h"
#include "views/heatmapplot.h"
#include "views/palette.h"
#include "views/viewfonts.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

QColor readableOn(const QColor &fill)
{
    return palette::inkOn(fill);
}

// A bucket colour for text: darker on a light background, lighter on a dark one.
QColor labelColor(const QColor &bucket, const ThemeColors &theme)
{
    return theme.background.lightnessF() > 0.5 ? bucket.darker(130) : bucket.lighter(125);
}

} // namespace

QColor lshBucketColor(int b, int n)
{
    static const QRgb colors[]
        = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
    if (n <= 10)
        return QColor(colors[size_t(std::max(0, b)) % 10]);
    return QColor::fromHsvF(std::fmod(0.61803 * b, 1.0), 0.55, 0.85);
}

LshView::LshView(QWidget *parent)
    : View(parent)
    , m_job([this](Built built) { adopt(std::move(built)); })
{
    m_timer.setInterval(kRoundMilliseconds);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        if (data().rounds > 0)
            setCurrentRound((m_round + 1) % data().rounds);
    });
}

int LshView::gridBucket(int round, int position) const
{
    return data().bucket.at(size_t(round)).at(size_t(position));
}

void LshView::setCurrentRound(int round)
{
    m_round = std::clamp(round, 0, std::max(0, data().rounds - 1));
    update();
}

void LshView::setAnimating(bool on)
{
    if (on && data().rounds > 1)
        m_timer.start();
    else
        m_timer.stop();
    update();
}

void LshView::mousePressEvent(QMouseEvent *event)
{
    setAnimating(!isAnimating());
    event->accept();
}

// Two columns of panels, each about 44 characters wide; the circle, the grid, the sorted matrix and the misses
// with their captions, about 30 lines of the small font in all: at the current font size.
QSize LshView::minimumSizeHint() const
{
    if (!m_message.isEmpty() || data().rounds == 0) // a message alone
        return {QFontMetrics(sizedFont(font(), 13)).averageCharWidth() * 40, 160};
    const QFontMetrics small(sizedFont(font(), 8.5));
    return {2 * 44 * small.averageCharWidth() + 4 * kViewMargin, 30 * small.height() + 2 * kViewMargin};
}

const attention::LshHeadAnalysis &LshView::data() const
{
    static const attention::LshHeadAnalysis none;
    return m_analysis ? m_analysis->data : none;
}

void LshView::refresh()
{
    const auto *analysis = currentAnalysis<LshAnalysis>();
    if (analysis == nullptr) {
        m_job.drop();
        m_requested.reset();
        m_analysis.reset();
        m_sortedImages.clear();
        setAnimating(false);
        m_message = !m_input.analysis.problem.isEmpty()
            ? m_input.analysis.problem
            : tr("Reading the buckets of %1 tokens …").arg(m_input.tokens.size());
        update();
        return;
    }
    const std::shared_ptr<const LshAnalysis> shared(m_input.analysis.result, analysis);
    const std::string style = m_spec.colormap + "/" + m_spec.scale;
    if (shared != m_requested || style != m_cachedStyle) {
        const bool newData = shared != m_requested;
        m_requested = shared;
        m_cachedStyle = style;
        startBuild(newData);
    }
    update();
}

// Short inputs (and a headless view) are drawn at once; long ones on the worker, the view saying so meanwhile.
void LshView::startBuild(bool newData)
{
    auto job = [analysis = m_requested, spec = m_spec, newData](const std::atomic<bool> &) {
        return Built {newData, analysis, sortedImages(analysis->data, spec)};
    };
    const int T = m_requested->data.T;
    if (T <= kInlineTokens || drawnHeadless(this)) {
        m_job.runNow(job);
        return;
    }
    setAnimating(false);
    m_message = tr("Drawing the sorted chunks of %1 tokens …").arg(T);
    m_job.start(std::move(job));
}

void LshView::adopt(Built built)
{
    m_analysis = built.analysis;
    m_sortedImages = std::move(built.images);
    m_message.clear();
    if (built.newData)
        m_round = 0;
    m_round = std::clamp(m_round, 0, std::max(0, data().rounds - 1));
    setAnimating(true);
    updateGeometry();
    update();
}

std::vector<QImage> LshView::sortedImages(const attention::LshHeadAnalysis &data, const ViewSpec &spec)
{
    std::unique_ptr<ColorLut> lut;
    try {
        lut = std::make_unique<ColorLut>(spec.colormap);
    } catch (const Error &) {
        lut = std::make_unique<ColorLut>("viridis");
    }
    const int T = data.T;
    float minPositive = std::numeric_limits<float>::max();
    for (float p : data.probs)
        if (p > 0)
            minPositive = std::min(minPositive, p);
    const ColorScale scale(
        spec.scale == "log", std::max(1e-12f, *std::max_element(data.probs.begin(), data.probs.end())), minPositive);
    // Long inputs are drawn in blocks of `step` × `step` sorted pairs: each pixel shows its block's largest
    // allowed weight (a sparse pattern would fade under a mean), grey when the block allows nothing.
    const int step = (T + kMaxImageSide - 1) / kMaxImageSide, side = (T + step - 1) / step;
    std::vector<QImage> images;
    for (int r = 0; r < data.rounds; ++r) {
        QImage image(side, side, QImage::Format_RGB32);
        const std::vector<int> &order = data.order[size_t(r)];
        for (int y = 0; y < side; ++y) {
            auto *line = reinterpret_cast<QRgb *>(image.scanLine(y));
            for (int x = 0; x < side; ++x) {
                float w = -1; // no allowed pair yet
                for (int a = y * step; a < std::min(T, (y + 1) * step); ++a)
                    for (int b = x * step; b < std::min(T, (x + 1) * step); ++b)
                        if (data.allowedSorted(r, a, b))
                            w = std::max(
                                w, data.probs[size_t(order[size_t(a)]) * size_t(T) + size_t(order[size_t(b)])]);
                line[x] = w >= 0 ? lut->map(scale.place(w)) : lut->masked();
            }
        }
        images.push_back(image);
    }
    return images;
}

QRect LshView::paintTitle(QPainter &p, const QRect &area, const QString &title) const
{
    p.setPen(themeColors(m_spec.theme).text);
    p.setFont(sizedFont(font(), 10.5, true));
    const QFontMetrics fm(p.font());
    p.drawText(area.left(), area.top() + fm.ascent(), title);
    return area.adjusted(0, fm.height() + 4, 0, 0);
}

void LshView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const ThemeColors theme = themeColors(m_spec.theme);
    p.fillRect(rect(), theme.background);
    p.setPen(theme.text);
    const QRect area = rect().adjusted(kViewMargin, kViewMargin, -kViewMargin, -kViewMargin);
    if (!m_message.isEmpty() || data().rounds == 0) {
        p.setFont(sizedFont(font(), 13));
        p.drawText(area, Qt::AlignCenter | Qt::TextWordWrap, m_message);
        return;
    }
    p.setFont(sizedFont(font(), 12, true));
    const QFontMetrics fm(p.font());
    p.drawText(area.left(), area.top() + fm.ascent(),
        tr("Layer %1, head %2: LSH attention (%3 rounds, %4 buckets, chunks of %5; T = %6) — round %7 of %3%8")
            .arg(m_spec.layer)
            .arg(std::max(0, m_spec.head))
            .arg(data().rounds)
            .arg(data().buckets)
            .arg(data().chunk)
            .arg(data().T)
            .arg(m_round + 1)
            .arg(data().rounds > 1 ? (isAnimating() ? tr("  (click to pause)") : tr("  (paused: click to play)"))
                                   : QString()));
    const QRect body = area.adjusted(0, fm.height() + 8, 0, 0);
    const int leftW = int(body.width() * 0.47), topH = int(body.height() * 0.66);
    const QRect left(body.left(), body.top(), leftW, body.height());
    const QRect right(
        body.left() + leftW + 2 * kViewMargin, body.top(), body.width() - leftW - 2 * kViewMargin, body.height());
    paintSphere(p, QRect(left.left(), left.top(), left.width(), topH - kViewMargin));
    paintGrid(p, QRect(left.left(), left.top() + topH, left.width(), left.height() - topH));
    paintSorted(p, QRect(right.left(), right.top(), right.width(), topH - kViewMargin));
    paintMissed(p, QRect(right.left(), right.top() + topH, right.width(), right.height() - topH));
}

QString LshView::caption(int panel) const
{
    if (panel == 1)
        return tr("Each dot is a token's key k̂ = q/|q| (shared QK), projected on the keys' two principal directions "
                  "(%1 of their variance) and pushed out to the circle. Sectors: the buckets this round's random "
                  "rotation gives to directions lying in that plane — a 2-D view of a hash that really happens in "
                  "d = %2 dimensions, so a dot (coloured by its true bucket) may sit in another sector. Nearby keys "
                  "tend to share a bucket, round after round.")
            .arg(formatPercent(data().explained, 2))
            .arg(data().d);
    return tr("Tokens sorted by (bucket, position), cut into chunks of %1 (lines). A query sees its own chunk and the "
              "one before%2; grey cells are not allowed this round. Colour: LSH's effective weight (all rounds).")
        .arg(data().chunk)
        .arg(data().causal ? tr(", keys at or before it") : QString());
}

void LshView::paintSphere(QPainter &p, const QRect &area) const
{
    const ThemeColors theme = themeColors(m_spec.theme);
    QRect box = paintTitle(p, area, tr("1 · Keys on the sphere, projected to 2-D — round %1").arg(m_round + 1));
    const QFont small = sizedFont(font(), 8.5);
    const QFontMetrics sm(small);
    const QRect captionBox(box.left(), box.bottom() - 5 * sm.height(), box.width(), 5 * sm.height());
    box.setBottom(captionBox.top() - 4);
    const int labelRoom = 3 * sm.height() + 8;
    const double radius = std::max(20, std::min(box.width(), box.height()) / 2 - labelRoom);
    const QPointF c(box.center());
    const auto at
        = [&](double angle, double r) { return QPointF(c.x() + r * std::cos(angle), c.y() - r * std::sin(angle)); };
    const std::vector<int> &sector = data().sector[size_t(m_round)];
    const int steps = attention::LshHeadAnalysis::kSectorSteps;
    const QRectF disc(c.x() - radius, c.y() - radius, 2 * radius, 2 * radius);
    p.setPen(Qt::NoPen);
    for (int s = 0; s < steps;) {
        int e = s;
        while (e < steps && sector[size_t(e)] == sector[size_t(s)])
            ++e;
        QColor fill = lshBucketColor(sector[size_t(s)], data().buckets);
        fill.setAlpha(70);
        p.setBrush(fill);
        p.drawPie(disc, int(std::lround(s * 360.0 * 16 / steps)), int(std::lround((e - s) * 360.0 * 16 / steps)));
        s = e;
    }
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(theme.text, 1.2));
    p.drawEllipse(disc);
    // Labels: sorted by angle, pushed outwards one ring when they would overlap the previous one.
    std::vector<int> byAngle(size_t(data().T));
    std::vector<double> angle(size_t(data().T));
    for (int t = 0; t < data().T; ++t) {
        byAngle[size_t(t)] = t;
        angle[size_t(t)] = std::atan2(data().points[size_t(t)][1], data().points[size_t(t)][0]);
    }
    std::sort(byAngle.begin(), byAngle.end(), [&](int a, int b) { return angle[size_t(a)] < angle[size_t(b)]; });
    const bool labels = data().T <= 96;
    std::vector<QRectF> placed; // labels already drawn: a label takes the first free ring, or is left out
    p.setFont(small);
    for (int t : byAngle) {
        const double a = angle[size_t(t)];
        const QColor color = lshBucketColor(data().bucket[size_t(m_round)][size_t(t)], data().buckets);
        p.setPen(QPen(theme.text, 1));
        p.setBrush(color);
        p.drawEllipse(at(a, radius), 5.5, 5.5);
        if (!labels)
            continue;
        const QString text = tokenLabel(m_input, t);
        const double width = sm.horizontalAdvance(text) + 2, c = std::cos(a);
        for (int ring = 0; ring < 4; ++ring) {
            const QPointF anchor = at(a, radius + 12 + ring * (sm.height() + 1));
            const double left = c > 0.3 ? anchor.x() : c < -0.3 ? anchor.x() - width : anchor.x() - width / 2;
            const QRectF box(left, anchor.y() - sm.height() / 2.0, width, sm.height());
            if (std::any_of(placed.begin(), placed.end(), [&](const QRectF &r) { return r.intersects(box); }))
                continue;
            p.setPen(labelColor(color, theme));
            p.drawText(box, Qt::AlignCenter, text);
            placed.push_back(box);
            break;
        }
    }
    for (int b = 0; b < data().buckets && data().buckets <= 16; ++b) { // legend, top left
        const QRect swatch(box.left(), box.top() + 4 + b * (sm.height() + 3), 12, sm.height() - 2);
        p.fillRect(swatch, lshBucketColor(b, data().buckets));
        p.setPen(theme.text);
        p.drawText(swatch.right() + 6, swatch.top() + sm.ascent() - 1, tr("bucket %1").arg(b));
    }
    p.setPen(theme.text);
    p.drawText(captionBox, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, caption(1));
}

void LshView::paintGrid(QPainter &p, const QRect &area) const
{
    const ThemeColors theme = themeColors(m_spec.theme);
    const QRect box = paintTitle(p, area, tr("2 · Bucket of every token in every round"));
    const QFont small = sizedFont(font(), 8.5);
    const QFontMetrics sm(small);
    p.setFont(small);
    const int rowLabel = sm.horizontalAdvance(tr("round %1").arg(data().rounds)) + 8;
    // Wide cells for short inputs; for long ones fractions of a pixel, so the strip always fits its panel.
    const double cw = std::min(34.0, double(box.width() - rowLabel) / std::max(1, data().T));
    const int ch = std::max(4, std::min(26, (box.height() - sm.height() - 6) / std::max(1, data().rounds)));
    const int top = box.top() + sm.height() + 4, left = box.left() + rowLabel;
    p.setPen(theme.text);
    if (cw >= sm.height())
        for (int t = 0; t < data().T; ++t)
            p.drawText(QRectF(left + t * cw, box.top(), cw, sm.height()), Qt::AlignCenter,
                sm.elidedText(tokenLabel(m_input, t), Qt::ElideRight, int(cw)));
    for (int r = 0; r < data().rounds; ++r) {
        p.setPen(theme.text);
        p.drawText(QRect(box.left(), top + r * ch, rowLabel - 6, ch), Qt::AlignRight | Qt::AlignVCenter,
            tr("round %1").arg(r + 1));
        for (int t = 0; t < data().T; ++t) {
            const int b = gridBucket(r, t);
            const QColor fill = lshBucketColor(b, data().buckets);
            const QRectF cell(left + t * cw, top + r * ch, cw, ch);
            p.fillRect(cw >= 3 ? cell.adjusted(0, 0, -1, -1) : cell.adjusted(0, 0, 0, -1), fill);
            if (cw >= 14 && ch >= sm.height()) {
                p.setPen(readableOn(fill));
                p.drawText(cell, Qt::AlignCenter, QString::number(b));
            }
        }
        if (r == m_round) {
            p.setPen(QPen(theme.text, 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(left - 1, top + r * ch - 1, data().T * cw + 1, ch + 1));
        }
    }
    p.setPen(theme.text);
    const int below = top + data().rounds * ch + 8;
    p.drawText(QRect(box.left(), below, box.width(), std::max(0, box.bottom() - below)),
        Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
        tr("Outlined: the round drawn in panels 1 and 3. Tokens meet only where they share a bucket (or sit in "
           "neighbouring chunks) in some round; more rounds give a pair split once another chance. The view reads "
           "these buckets from the trace (layer.%1.lsh.buckets); it does not rehash.")
            .arg(m_spec.layer));
}

void LshView::paintSorted(QPainter &p, const QRect &area) const
{
    const ThemeColors theme = themeColors(m_spec.theme);
    QRect box = paintTitle(p, area, tr("3 · Sorted by bucket and chunked — round %1").arg(m_round + 1));
    const QFont small = sizedFont(font(), 8.5);
    const QFontMetrics sm(small);
    const QRect captionBox(box.left(), box.bottom() - 3 * sm.height(), box.width(), 3 * sm.height());
    box.setBottom(captionBox.top() - 6);
    const int T = data().T;
    const int labelW = sm.horizontalAdvance(QStringLiteral("WWW")) + 6;
    const int room = std::max(1, std::min(box.width() - labelW, box.height() - labelW));
    const int side = T <= room ? room / T * T : room; // whole pixels per token when they fit
    const QRect map(box.left() + labelW, box.top() + labelW, side, side);
    if (size_t(m_round) < m_sortedImages.size())
        p.drawImage(map, m_sortedImages[size_t(m_round)]);
    const double cell = double(side) / T;
    p.setPen(QPen(theme.text, 1.5));
    for (int k = data().chunk; k < T && data().chunk * cell >= 12; k += data().chunk) { // no mesh of lines
        p.drawLine(QPointF(map.left(), map.top() + k * cell), QPointF(map.right() + 1, map.top() + k * cell));
        p.drawLine(QPointF(map.left() + k * cell, map.top()), QPointF(map.left() + k * cell, map.bottom() + 1));
    }
    p.setPen(theme.frame);
    p.setBrush(Qt::NoBrush);
    p.drawRect(map);
    p.setFont(small);
    if (cell >= sm.height() - 2) {
        const std::vector<int> &order = data().order[size_t(m_round)];
        for (int a = 0; a < T; ++a) {
            const int t = order[size_t(a)];
            p.setPen(labelColor(lshBucketColor(data().bucket[size_t(m_round)][size_t(t)], data().buckets), theme));
            const QString text = sm.elidedText(tokenLabel(m_input, t), Qt::ElideRight, labelW - 4);
            p.drawText(
                QRectF(box.left(), map.top() + a * cell, labelW - 4, cell), Qt::AlignRight | Qt::AlignVCenter, text);
            p.drawText(
                QRectF(map.left() + a * cell, box.top(), cell, labelW - 2), Qt::AlignHCenter | Qt::AlignBottom, text);
        }
    }
    p.setPen(theme.text);
    p.drawText(QRect(map.right() + 10, map.top(), box.right() - map.right() - 10, map.height()),
        Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, tr("rows: queries\ncolumns: keys\nboth in sorted order"));
    p.drawText(captionBox, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, caption(3));
}

void LshView::paintMissed(QPainter &p, const QRect &area) const
{
    const ThemeColors theme = themeColors(m_spec.theme);
    const QRect box = paintTitle(p, area, tr("4 · What LSH missed"));
    const QFont small = sizedFont(font(), 9);
    const QFontMetrics sm(small);
    p.setFont(small);
    p.setPen(theme.text);
    if (data().full.empty()) {
        p.drawText(box, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
            tr("Full attention is recomputed for this comparison only up to %1 tokens; this input has %2.")
                .arg(attention::LshHeadAnalysis::kMaxFullTokens)
                .arg(data().T));
        return;
    }
    const QString intro = tr("Full attention as the LSH kernel scores it, with every token in one bucket (shared QK: "
                             "keys k̂ = q/|q|, own key penalised, causal): %1 of its weight (mean over queries) falls "
                             "outside LSH's mask. Pairs with full weight ≥ 0.1 that no round let the query see:")
                              .arg(formatPercent(data().missedFraction));
    const QRect introRect = sm.boundingRect(box, Qt::TextWordWrap, intro);
    p.drawText(box, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, intro);
    int top = introRect.bottom() + 6;
    const int lineH = sm.height();
    if (!data().missed.empty()) {
        p.setPen(theme.axis);
        p.drawText(box.left() + 12, top + sm.ascent(), tr("query → key   full weight"));
        p.setPen(theme.text);
        top += lineH + 2;
    }
    if (data().missed.empty()) {
        p.drawText(box.left() + 12, top + sm.ascent(), tr("none: LSH saw every key full attention weighs ≥ 0.1."));
        return;
    }
    const int perColumn = std::max(1, (box.bottom() - top) / lineH);
    const int columns = 2, colW = box.width() / columns;
    const int shown = std::min<int>(int(data().missed.size()), perColumn * columns);
    for (int n = 0; n < shown; ++n) {
        const attention::LshMissedPair &m = data().missed[size_t(n)];
        const bool last = n == shown - 1 && shown < int(data().missed.size());
        const QString line = last ? tr("… and %1 more").arg(data().missed.size() - size_t(n))
                                  : QStringLiteral("%1 → %2   %3")
                                        .arg(tr("'%1' #%2").arg(tokenLabel(m_input, m.query)).arg(m.query),
                                            tr("'%1' #%2").arg(tokenLabel(m_input, m.key)).arg(m.key))
                                        .arg(formatNumber(m.weight, 2));
        p.drawText(box.left() + 12 + (n / perColumn) * colW, top + (n % perColumn) * lineH + sm.ascent(),
            sm.elidedText(line, Qt::ElideRight, colW - 16));
    }
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::lsh::makeView(QWidget *parent)
{
    return std::make_unique<LshView>(parent);
}
