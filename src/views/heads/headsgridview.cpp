#include "heads/headsgridview.h"
#include "heads/heads.h"

#include "trace/names.h"

#include "views/plottheme.h"

#include "views/colormaps.h"
#include "views/headthumbnail.h"
#include "views/heatmapplot.h"
#include "views/palette.h"
#include "views/viewfonts.h"

#include "util/error.h"
#include "util/parallel.h"

#include <QComboBox>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

constexpr int64_t kInlineTokens = 1024; // up to this T the thumbnails are pooled at once (a few ms)
constexpr int kMinCell = 14;
constexpr int kMaxCell = 200;
const QColor &kSelected = palette::selected;

} // namespace

HeadsGridView::HeadsGridView(QWidget *parent)
    : View(parent)
    , m_size(new QComboBox(this))
    , m_job([this](std::vector<QImage> thumbnails) {
        m_thumbs = std::move(thumbnails);
        update();
    })
{
    setMouseTracking(true);
    setAutoFillBackground(false);
    m_size->addItem(tr("Thumbnails: fit"), 0);
    for (int px : {96, 160, 240, 360, 480})
        m_size->addItem(tr("Thumbnails: %1 px").arg(px), px);
    m_size->setToolTip(tr("The side of each thumbnail. Once every token gets a row tall enough for text, the "
                          "thumbnails are labelled with their query and key tokens; the view scrolls when the grid "
                          "is larger than the window."));
    connect(m_size, &QComboBox::activated, this, [this] {
        m_spec.set(views::heads::kThumbnailSize, m_size->currentData().toInt());
        refresh();
        emit specEdited(m_spec);
    });
}

std::vector<QWidget *> HeadsGridView::interfaceWidgets() const
{
    return {m_size};
}

void HeadsGridView::resizeEvent(QResizeEvent *event)
{
    m_size->adjustSize();
    m_size->move(width() - m_size->width() - kViewMargin, kViewMargin);
    View::resizeEvent(event);
}

QFont HeadsGridView::tokenFont() const
{
    return sizedFont(font(), 8);
}

int HeadsGridView::tokenCount() const
{
    const TraceEntry *probs = m_input.trace ? m_input.trace->find(siteTensorName(m_input, 0, "attn.probs")) : nullptr;
    return probs != nullptr && probs->tensor.rank() == 3 ? int(probs->tensor.dim(1)) : int(m_input.tokens.size());
}

int HeadsGridView::keyCount() const
{
    const TraceEntry *probs = m_input.trace ? m_input.trace->find(siteTensorName(m_input, 0, "attn.probs")) : nullptr;
    return probs != nullptr && probs->tensor.rank() == 3 ? int(probs->tensor.dim(2)) : tokenCount();
}

int HeadsGridView::headerTop() const
{
    const QFontMetrics label(sizedFont(font(), 10)), title(sizedFont(font(), 12, true));
    const int subtitles = m_sinkShares.empty() ? 1 : 2; // the sinks' line under the first
    return kViewMargin + std::max(title.height() + subtitles * label.height() + 8, m_size->sizeHint().height() + 4);
}

QSize HeadsGridView::sizeHint() const
{
    return {std::max(400, 90 + 100 * m_heads), std::max(300, 80 + 100 * m_layers)};
}

// Every thumbnail at least 40 pixels, with the row and column labels, at the current font size.
QSize HeadsGridView::minimumSizeHint() const
{
    if (m_spec.get(views::heads::kThumbnailSize) > 0 && m_layers > 0
        && m_heads > 0) { // the picked size whole: the view scrolls
        const Grid g = grid();
        return {g.left + m_heads * g.cell + kViewMargin, g.top + m_layers * g.cell + kViewMargin};
    }
    const QFontMetrics label(sizedFont(font(), 10)), title(sizedFont(font(), 12, true));
    const int layers = std::max(1, m_layers), heads = std::max(1, m_heads);
    return {label.horizontalAdvance(QStringLiteral("Layer 00")) + 20 + heads * 48,
        2 * title.height() + label.height() + 20 + layers * 48};
}

void HeadsGridView::countLayersAndHeads()
{
    const Trace *trace = m_input.trace.get();
    m_layers = m_input.layers;
    if (m_layers <= 0) { // no model information: count the layers the trace has
        m_layers = 0;
        while (trace != nullptr && trace->contains(siteTensorName(m_input, m_layers, "attn.probs")))
            ++m_layers;
    }
    m_heads = m_input.heads;
    if (m_heads <= 0 && trace != nullptr) {
        const TraceEntry *first = trace->find(siteTensorName(m_input, 0, "attn.probs"));
        m_heads = first != nullptr && first->tensor.rank() == 3 ? static_cast<int>(first->tensor.dim(0)) : 0;
    }
}

void HeadsGridView::refresh()
{
    const size_t entries = m_input.trace ? m_input.trace->entries().size() : 0;
    if (m_input.trace != m_cachedTrace || entries != m_cachedEntries || m_spec.colormap != m_cachedColormap
        || m_spec.scale != m_cachedScale || !(m_input.site == m_cachedSite)) {
        m_cachedTrace = m_input.trace;
        m_cachedSite = m_input.site;
        m_cachedEntries = entries;
        m_cachedColormap = m_spec.colormap;
        m_cachedScale = m_spec.scale;
        rebuildThumbnails();
    }
    if (const int index = m_size->findData(m_spec.get(views::heads::kThumbnailSize)); index >= 0)
        m_size->setCurrentIndex(index);
    else {
        m_size->addItem(tr("Thumbnails: %1 px").arg(m_spec.get(views::heads::kThumbnailSize)),
            m_spec.get(views::heads::kThumbnailSize));
        m_size->setCurrentIndex(m_size->count() - 1);
    }
    m_size->setFont(font());
    m_size->adjustSize();
    m_size->move(width() - m_size->width() - kViewMargin, kViewMargin);
    updateGeometry();
    update();
}

// Each head's learned sink share averaged over its rows, or else its weight on the first token averaged over the
// queries after it: O(layers · heads · T), cheap beside the pooling.
void HeadsGridView::averageSinkShares()
{
    m_sinkShares.clear();
    m_learnedSinks = false;
    std::vector<float> shares(size_t(std::max(0, m_layers * m_heads)), -1.0f);
    bool any = false;
    for (int l = 0; l < m_layers; ++l)
        if (const Tensor *learned = findSinkShares(m_input, l, m_heads, tokenCount())) {
            for (int h = 0; h < m_heads; ++h)
                shares[size_t(l * m_heads + h)] = learned->matrix().row(h).mean();
            any = m_learnedSinks = true;
        }
    for (int l = 0; !m_learnedSinks && l < m_layers; ++l)
        for (int h = 0; h < m_heads; ++h) {
            QString ignored;
            if (const Tensor *probs = findHeadTensor(m_input, l, "attn.probs", h, &ignored)) {
                shares[size_t(l * m_heads + h)]
                    = firstKeyShare({probs->slice(h).data(), int(probs->dim(1)), int(probs->dim(2)), nullptr});
            } else if (const auto readout = findAttentionReadout(m_input, l)) { // the first key's column alone
                const int rows = int(readout->queries());
                auto column = std::make_shared<std::vector<float>>(size_t(rows));
                readout->tile(column->data(), 1, ops::ScoreStage::Probs, h, 0, rows, 0, 1);
                shares[size_t(l * m_heads + h)] = firstKeyShare({column->data(), rows, 1, column});
            }
            any = any || shares[size_t(l * m_heads + h)] >= 0;
        }
    if (any)
        m_sinkShares = std::move(shares);
}

QString HeadsGridView::sinkRanking() const
{
    std::vector<int> order;
    for (int i = 0; i < int(m_sinkShares.size()); ++i)
        if (m_sinkShares[size_t(i)] >= 0)
            order.push_back(i);
    std::stable_sort(
        order.begin(), order.end(), [this](int a, int b) { return m_sinkShares[size_t(a)] > m_sinkShares[size_t(b)]; });
    QStringList top;
    for (size_t k = 0; k < std::min<size_t>(3, order.size()); ++k)
        top << tr("L%1 H%2 %3 %")
                   .arg(order[k] / m_heads)
                   .arg(order[k] % m_heads)
                   .arg(QString::number(100.0 * m_sinkShares[size_t(order[k])], 'f', 0));
    return (m_learnedSinks ? tr("on each head: the mean share its sink takes; most: %1")
                           : tr("on each head: its mean weight on the first token (later queries), where many "
                                "models park attention; most: %1"))
        .arg(top.join(QStringLiteral(", ")));
}

void HeadsGridView::rebuildThumbnails()
{
    m_job.drop(); // a pooling still running is now stale
    countLayersAndHeads();
    averageSinkShares();
    m_thumbs.assign(static_cast<size_t>(std::max(0, m_layers * m_heads)), QImage());
    m_message.clear();
    std::shared_ptr<const ColorLut> lut;
    try {
        lut = std::make_shared<const ColorLut>(m_spec.colormap);
    } catch (const Error &e) {
        m_message = QString::fromStdString(e.what());
        return;
    }
    // Collect the [H, T, T] slices, then pool them on both cores (2048 tokens x 144 heads, or 8192 x 8, is real
    // work: above kInlineTokens on a worker thread).
    // A head's probabilities and masked scores: slices of the trace's [H, T, T] tensors, or (a trace that keeps
    // attention on demand) computed from its readout on the worker, a head at a time.
    struct Job
    {
        size_t index;
        const Tensor *probs = nullptr;
        const Tensor *masked = nullptr; // null when the trace has none of the same shape
        std::shared_ptr<const AttentionReadout> readout;
    };
    std::vector<Job> jobs;
    int64_t tokens = 0;
    for (int l = 0; l < m_layers; ++l) {
        QString problem;
        const auto readout = findAttentionReadout(m_input, l);
        for (int h = 0; h < m_heads; ++h)
            if (const Tensor *t = findHeadTensor(m_input, l, "attn.probs", h, &problem)) {
                const Tensor *m = findHeadTensor(m_input, l, "attn.masked", h, &problem);
                jobs.push_back({static_cast<size_t>(l * m_heads + h), t, m && m->shape() == t->shape() ? m : nullptr});
                tokens = t->dim(1);
            } else if (readout && h < readout->heads()) {
                jobs.push_back({static_cast<size_t>(l * m_heads + h), nullptr, nullptr, readout});
                tokens = readout->queries();
            }
    }
    if (jobs.empty()) {
        m_message = notComputedText(m_input, siteTensorName(m_input, 0, "attn.probs"));
        return;
    }
    // The job keeps the trace alive, so the tensor pointers and readouts stay valid after a new trace arrives.
    auto pool = [trace = m_input.trace, jobs = std::move(jobs), lut, log = m_spec.scale == "log",
                    count = m_thumbs.size(), heads = size_t(m_heads)](const std::atomic<bool> &cancelled) {
        std::vector<QImage> images(count);
        parallelFor(int64_t(jobs.size()), 1, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end && !cancelled.load(); ++i) {
                const Job &job = jobs[size_t(i)];
                const int64_t head = int64_t(job.index % heads);
                if (job.readout) {
                    const Tensor probs = job.readout->head(ops::ScoreStage::Probs, head),
                                 masked = job.readout->head(ops::ScoreStage::Mask, head);
                    images[job.index]
                        = headThumbnail(probs.data(), masked.data(), int(probs.dim(0)), int(probs.dim(1)), *lut, log);
                    continue;
                }
                images[job.index] = headThumbnail(job.probs->slice(head).data(),
                    job.masked ? job.masked->slice(head).data() : nullptr, static_cast<int>(job.probs->dim(1)),
                    static_cast<int>(job.probs->dim(2)), *lut, log);
            }
        });
        return images;
    };
    if (tokens <= kInlineTokens || drawnHeadless(this))
        m_job.runNow(pool);
    else
        m_job.start(std::move(pool));
}

QImage HeadsGridView::thumbnail(int layer, int head) const
{
    if (layer < 0 || head < 0 || layer >= m_layers || head >= m_heads)
        return {};
    return m_thumbs[static_cast<size_t>(layer * m_heads + head)];
}

HeadsGridView::Grid HeadsGridView::grid() const
{
    const QFontMetrics label(sizedFont(font(), 10));
    Grid g;
    g.left = kViewMargin + label.horizontalAdvance(tr("Layer %1").arg(std::max(0, m_layers - 1))) + 10;
    g.top = headerTop() + label.height() + 4;
    if (keyValueGroup(m_input, 0) >= 0) // a row for the K/V groups above the head labels
        g.top += label.height() + 4;
    const int cols = std::max(1, m_heads);
    const int rows = std::max(1, m_layers);
    const int tokens = std::max({1, tokenCount(), keyCount()});
    const QFontMetrics tokenMetrics(tokenFont());
    const auto labelsFit = [&](int thumb) { return thumb >= tokens * tokenMetrics.height() * 9 / 10; };
    int labelWidth = 0; // measured only where labels can fit at all: a few dozen tokens, not thousands per mouse move
    if (labelsFit(std::max(m_spec.get(views::heads::kThumbnailSize), kMaxCell))) {
        for (int t = 0; t < tokens; ++t)
            labelWidth = std::max({labelWidth, tokenMetrics.horizontalAdvance(tokenLabel(m_input, t)),
                tokenMetrics.horizontalAdvance(keyLabel(m_input, t))});
        labelWidth = std::min(labelWidth, tokenMetrics.horizontalAdvance(QStringLiteral("MMMMMM"))) + 6;
    }
    const auto withThumb = [&](int thumb, int labels) {
        g.thumb = thumb;
        g.labels = labels;
        g.cell = labels + thumb + std::max(4, thumb / 12);
    };
    if (m_spec.get(views::heads::kThumbnailSize) > 0) {
        withThumb(m_spec.get(views::heads::kThumbnailSize),
            labelsFit(m_spec.get(views::heads::kThumbnailSize)) ? labelWidth : 0);
        return g;
    }
    const int w = (width() - g.left - kViewMargin) / cols;
    const int h = (height() - g.top - kViewMargin) / rows;
    const int cell = std::clamp(std::min(w, h), kMinCell, kMaxCell);
    withThumb(cell - std::max(4, cell / 12), 0);
    if (const int labelled = (std::min(w, h) - labelWidth) * 12 / 13; labelled > 0 && labelsFit(labelled))
        withThumb(std::min(labelled, kMaxCell), labelWidth);
    return g;
}

QRect HeadsGridView::thumbnailRect(int layer, int head) const
{
    if (layer < 0 || head < 0 || layer >= m_layers || head >= m_heads || !m_message.isEmpty())
        return {};
    return grid().thumbnail(layer, head);
}

HeadsGridView::Hit HeadsGridView::hitTest(const QPoint &pos) const
{
    if (!m_message.isEmpty())
        return {};
    const Grid g = grid(); // once: it measures the token labels
    for (int l = 0; l < m_layers; ++l)
        for (int h = 0; h < m_heads; ++h)
            if (g.thumbnail(l, h).contains(pos))
                return {l, h};
    return {};
}

QString HeadsGridView::toolTipAt(const QPoint &pos) const
{
    const Hit hit = hitTest(pos);
    if (hit.layer < 0)
        return {};
    QString text = tr("Layer %1 \u00B7 Head %2: click to open its attention map").arg(hit.layer).arg(hit.head);
    if (const QString shared = sharedKeyValueText(m_input, hit.head); !shared.isEmpty())
        text += QStringLiteral("\n") + shared;
    QString problem;
    const Tensor *probs = findHeadTensor(m_input, hit.layer, "attn.probs", hit.head, &problem);
    if (probs == nullptr)
        return text;
    // The cell under the pointer: the thumbnail spans the whole [T, T] matrix.
    const QRect r = thumbnailRect(hit.layer, hit.head);
    const int tokens = int(probs->dim(1)), keys = int(probs->dim(2));
    const int row = std::clamp(int(int64_t(pos.y() - r.top()) * tokens / std::max(1, r.height())), 0, tokens - 1);
    const int col = std::clamp(int(int64_t(pos.x() - r.left()) * keys / std::max(1, r.width())), 0, keys - 1);
    return text + QStringLiteral("\n") + cellPrefix(m_input, row, col) + QLatin1Char(':')
        + attentionCellText(m_input, hit.layer, hit.head, row, col, false);
}

QColor HeadsGridView::textColor() const
{
    return themeColors(m_spec.theme).text;
}

void HeadsGridView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), themeColors(m_spec.theme).background);
    p.setPen(textColor());
    if (!m_message.isEmpty() || m_layers == 0 || m_heads == 0) {
        p.setFont(sizedFont(font(), 13));
        const QString text
            = m_message.isEmpty() ? notComputedText(m_input, siteTensorName(m_input, 0, "attn.probs")) : m_message;
        p.drawText(rect().adjusted(kViewMargin, kViewMargin, -kViewMargin, -kViewMargin),
            Qt::AlignCenter | Qt::TextWordWrap, text);
        return;
    }
    const Grid g = grid();
    paintLabels(p, g);
    paintThumbnails(p, g);
}

void HeadsGridView::paintLabels(QPainter &p, const Grid &g) const
{
    const QFont titleFont = sizedFont(font(), 12, true);
    const QFont labelFont = sizedFont(font(), 10);
    const QFontMetrics title(titleFont);
    const QFontMetrics label(labelFont);
    p.setFont(titleFont);
    const QString site = siteTitle(m_input);
    p.drawText(QPoint(kViewMargin, kViewMargin + title.ascent()),
        site.isEmpty() ? tr("Attention probabilities of every head") : tr("%1: every layer and head").arg(site));
    p.setFont(labelFont);
    QColor dim = textColor();
    dim.setAlphaF(0.7f);
    p.setPen(dim);
    p.drawText(QPoint(kViewMargin, kViewMargin + title.height() + label.ascent() + 2),
        tr("each thumbnail scaled to its own maximum \u00B7 click one to open it"));
    if (!m_sinkShares.empty())
        p.drawText(
            QPoint(kViewMargin, kViewMargin + title.height() + label.height() + label.ascent() + 2), sinkRanking());
    p.setPen(textColor());
    const bool roomy = label.horizontalAdvance(tr("Head %1").arg(m_heads - 1)) + 4 <= g.cell;
    const int headerY = g.top - 4 - label.descent();
    for (int h = 0; h < m_heads; ++h) {
        const QString text = roomy ? tr("Head %1").arg(h) : QString::number(h);
        const int x = g.left + h * g.cell + g.labels + (g.thumb - label.horizontalAdvance(text)) / 2;
        p.drawText(QPoint(x, headerY), text);
    }
    paintKeyValueGroups(p, g, headerY - label.height() - 2);
    for (int l = 0; l < m_layers; ++l) {
        const QRect row(kViewMargin, g.top + l * g.cell + g.labels, g.left - kViewMargin - 8, g.thumb);
        p.drawText(row, Qt::AlignRight | Qt::AlignVCenter, tr("Layer %1").arg(l));
    }
}

// Grouped-query attention: a bracket over the query heads that read the same K/V head, labelled with it.
void HeadsGridView::paintKeyValueGroups(QPainter &p, const Grid &g, int baseline) const
{
    if (keyValueGroup(m_input, 0) < 0)
        return;
    const QFontMetrics label(p.font());
    const int size = m_input.model->config.queriesPerKv();
    for (int first = 0; first < m_heads; first += size) {
        const int last = std::min(m_heads, first + size) - 1;
        const int x0 = g.left + first * g.cell + g.labels, x1 = g.left + last * g.cell + g.labels + g.thumb;
        const QString text = x1 - x0 >= label.horizontalAdvance(tr("K/V head %1").arg(first / size)) + 4
            ? tr("K/V head %1").arg(first / size)
            : tr("K/V %1").arg(first / size);
        p.drawText(QPoint((x0 + x1 - label.horizontalAdvance(text)) / 2, baseline - 3), text);
        p.drawLine(x0, baseline, x1, baseline);
        p.drawLine(x0, baseline, x0, baseline + 3);
        p.drawLine(x1, baseline, x1, baseline + 3);
    }
}

void HeadsGridView::paintThumbnails(QPainter &p, const Grid &g) const
{
    const QColor frame = themeColors(m_spec.theme).frame;
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.setFont(sizedFont(font(), 9));
    for (int l = 0; l < m_layers; ++l) {
        for (int h = 0; h < m_heads; ++h) {
            const QRect r = g.thumbnail(l, h);
            if (g.labels > 0)
                paintTokenLabels(p, g, r);
            const QImage &img = m_thumbs[static_cast<size_t>(l * m_heads + h)];
            if (img.isNull()) {
                p.setPen(QPen(frame, 1, Qt::DashLine));
                p.setBrush(Qt::NoBrush);
                p.drawRect(r.adjusted(0, 0, -1, -1));
                p.setPen(textColor());
                if (g.thumb >= 48)
                    p.drawText(
                        r, Qt::AlignCenter | Qt::TextWordWrap, m_job.busy() ? tr("pooling…") : tr("not computed yet"));
                continue;
            }
            p.drawImage(r, img);
            if (sinkShare(l, h) >= 0 && g.thumb >= 28) {
                const QString share = QString::number(100.0 * sinkShare(l, h), 'f', 0) + QStringLiteral(" %");
                const QFontMetrics fm(p.font());
                const QRect box(r.right() - fm.horizontalAdvance(share) - 5, r.top() + 1,
                    fm.horizontalAdvance(share) + 4, fm.height());
                p.fillRect(box, themeColors(m_spec.theme).background);
                p.setPen(textColor());
                p.drawText(box, Qt::AlignCenter, share);
            }
        }
    }
    p.setBrush(Qt::NoBrush);
    if (m_hover.layer >= 0) {
        QColor hover = textColor();
        hover.setAlphaF(0.75f);
        p.setPen(QPen(hover, 2));
        p.drawRect(g.thumbnail(m_hover.layer, m_hover.head).adjusted(-2, -2, 1, 1));
    }
    if (m_spec.layer >= 0 && m_spec.layer < m_layers && m_spec.head >= 0 && m_spec.head < m_heads) {
        p.setPen(QPen(kSelected, 3));
        p.drawRect(g.thumbnail(m_spec.layer, m_spec.head).adjusted(-2, -2, 1, 1));
    }
}

// Query tokens down the left of the thumbnail, key tokens up its top edge, one per row and column.
void HeadsGridView::paintTokenLabels(QPainter &p, const Grid &g, const QRect &thumbnail) const
{
    const int tokens = tokenCount();
    const QFont font = tokenFont();
    const QFontMetrics metrics(font);
    const int room = g.labels - 4;
    p.save();
    p.setFont(font);
    QColor dim = textColor();
    dim.setAlphaF(0.8f);
    p.setPen(dim);
    const double pitch = double(g.thumb) / tokens;
    for (int t = 0; t < tokens; ++t) {
        const QString text = metrics.elidedText(tokenLabel(m_input, t), Qt::ElideRight, room);
        const int centre = int((t + 0.5) * pitch);
        p.drawText(
            QRect(thumbnail.left() - g.labels, thumbnail.top() + centre - metrics.height() / 2, room, metrics.height()),
            Qt::AlignRight | Qt::AlignVCenter, text);
    }
    const int keys = keyCount();
    const double keyPitch = double(g.thumb) / keys;
    for (int t = 0; t < keys; ++t) {
        const QString text = metrics.elidedText(keyLabel(m_input, t), Qt::ElideRight, room);
        const int centre = int((t + 0.5) * keyPitch);
        p.save();
        p.translate(thumbnail.left() + centre, thumbnail.top() - 4);
        p.rotate(-90);
        p.drawText(QRect(0, -metrics.height() / 2, room, metrics.height()), Qt::AlignLeft | Qt::AlignVCenter, text);
        p.restore();
    }
    p.restore();
}

void HeadsGridView::mouseMoveEvent(QMouseEvent *event)
{
    const Hit hit = hitTest(event->position().toPoint());
    if (hit.layer != m_hover.layer || hit.head != m_hover.head) {
        m_hover = hit;
        update();
    }
    if (hit.layer >= 0)
        QToolTip::showText(event->globalPosition().toPoint(), toolTipAt(event->position().toPoint()), this);
    else
        QToolTip::hideText();
}

void HeadsGridView::mousePressEvent(QMouseEvent *event)
{
    const Hit hit = hitTest(event->position().toPoint());
    if (event->button() != Qt::LeftButton || hit.layer < 0) {
        View::mousePressEvent(event);
        return;
    }
    ViewSpec spec = m_spec;
    spec.view = "attention";
    spec.layer = hit.layer;
    spec.head = hit.head;
    emit specEdited(spec);
}

void HeadsGridView::leaveEvent(QEvent *event)
{
    m_hover = {};
    QToolTip::hideText();
    update();
    View::leaveEvent(event);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::heads::makeView(QWidget *parent)
{
    return std::make_unique<HeadsGridView>(parent);
}
