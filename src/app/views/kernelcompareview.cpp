#include "views/kernelcompareview.h"

#include "views/colormaps.h"
#include "views/heatmapplot.h"
#include "views/tensorview.h"
#include "views/viewfonts.h"

#include "util/error.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPainter>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

constexpr int kMargin = 10;
constexpr double kPlotShare = 0.36; // of the width, for the time plot on the right

// Tay et al., "Efficient Transformers: A Survey" (2020), Table 1: time complexity of each model.
QString tayComplexity(const QString &kind)
{
    if (kind == "full")
        return "O(N²)";
    if (kind == "lsh")
        return "O(N log N)";
    return "O(N)"; // bigbird, longformer, strided, fixed (sparse patterns), linformer, performer
}

// Tableau 10: distinct on light and dark backgrounds.
QColor seriesColor(int i)
{
    static const QRgb colors[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948, 0xb07aa1, 0x9c755f};
    return QColor(colors[static_cast<size_t>(i) % 8]);
}

QString number(double v)
{
    return v != 0 && std::abs(v) < 0.01 ? QString::number(v, 'e', 1) : QString::number(v, 'f', 2);
}

} // namespace

KernelCompareView::KernelCompareView(QWidget *parent)
    : View(parent)
    , m_plot(new QCustomPlot(this))
    , m_benchFile(defaultBenchmarkFile())
    , m_job([this](Comparison c) { adopt(std::move(c)); })
{
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    m_plot->xAxis->setLabel(tr("sequence length N (tokens)"));
    m_plot->yAxis->setLabel(tr("time per head (ms, median)"));
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(
        0, 0, new QCPTextElement(m_plot, tr("Measured time vs N"), sizedFont(font(), 10, true)));
    loadBenchmarks();
}

QString KernelCompareView::defaultBenchmarkFile()
{
    return QStringLiteral(ATLAS_ATTENTION_SWEEP_FILE);
}

void KernelCompareView::setBenchmarkFile(const QString &path)
{
    m_benchFile = path;
    loadBenchmarks();
    update();
}

QSize KernelCompareView::sizeHint() const
{
    return {1400, 900};
}

QSize KernelCompareView::minimumSizeHint() const
{
    return {500, 300};
}

void KernelCompareView::loadBenchmarks()
{
    m_plot->clearGraphs();
    m_benchMessage.clear();
    QFile file(m_benchFile);
    QJsonParseError error {};
    const QJsonDocument doc
        = file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll(), &error) : QJsonDocument();
    const QJsonArray kernels = doc.object().value("kernels").toArray();
    if (!file.isOpen())
        m_benchMessage
            = tr("No measured times: cannot read %1 (make it with bench-attention --sweep --json).").arg(m_benchFile);
    else if (error.error != QJsonParseError::NoError || kernels.isEmpty())
        m_benchMessage
            = tr("No measured times in %1: %2")
                  .arg(m_benchFile,
                      error.error != QJsonParseError::NoError ? error.errorString() : tr("no \"kernels\" array"));
    for (int i = 0; i < kernels.size(); ++i) {
        const QJsonObject k = kernels[i].toObject();
        QCPGraph *g = m_plot->addGraph();
        const QString kind = k.value("kind").toString();
        g->setName(QStringLiteral("%1 — %2").arg(kind, tayComplexity(kind)));
        g->setPen(QPen(seriesColor(i), 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        for (const QJsonValue &point : k.value("points").toArray())
            g->addData(point["n"].toDouble(), point["median_ms"].toDouble());
    }
    const QJsonObject root = doc.object();
    m_plot->xAxis2->setVisible(false);
    if (!kernels.isEmpty()) {
        m_plot->rescaleAxes();
        m_plot->xAxis->scaleRange(1.15, m_plot->xAxis->range().center());
        m_plot->yAxis->scaleRange(1.3, m_plot->yAxis->range().center());
        auto *title = qobject_cast<QCPTextElement *>(m_plot->plotLayout()->element(0, 0));
        title->setText(
            tr("Measured time vs N (one head, d_head %1)\n%2 · %3\nlegend: kernel — complexity (Tay et al. 2020)")
                .arg(root.value("d_head").toInt())
                .arg(root.value("machine").toString(), root.value("date").toString()));
    }
}

void KernelCompareView::refresh()
{
    const size_t entries = m_input.trace ? m_input.trace->entries().size() : 0;
    const int head = std::max(0, m_spec.head);
    const std::string style = m_spec.colormap + "/" + m_spec.scale;
    if (m_input.trace != m_cachedTrace || entries != m_cachedEntries || m_spec.layer != m_cachedLayer
        || head != m_cachedHead) {
        m_cachedTrace = m_input.trace;
        m_cachedEntries = entries;
        m_cachedLayer = m_spec.layer;
        m_cachedHead = head;
        m_cachedStyle.clear();
        recompute();
    }
    if (style != m_cachedStyle) {
        m_cachedStyle = style;
        rebuildImages();
    }
    applyPlotTheme(m_plot, m_spec.theme);
    m_plot->legend->setBrush(themeColors(m_spec.theme).background);
    m_plot->legend->setTextColor(themeColors(m_spec.theme).text);
    m_plot->replot();
    update();
}

void KernelCompareView::recompute()
{
    m_job.drop(); // whatever is still running is now stale
    m_entries.clear();
    m_images.clear();
    m_message.clear();
    const Trace *trace = m_input.trace.get();
    const int layer = m_spec.layer, head = std::max(0, m_spec.head);
    const TraceEntry *q = trace ? trace->find(traceName(layer, "attn.q")) : nullptr;
    const TraceEntry *k = trace ? trace->find(traceName(layer, "attn.k")) : nullptr;
    const TraceEntry *v = trace ? trace->find(traceName(layer, "attn.v")) : nullptr;
    if (q == nullptr || k == nullptr || v == nullptr) {
        m_message = notComputedText(tr("the Q, K, V split"), traceName(layer, "attn.q"));
        return;
    }
    if (q->tensor.rank() != 3 || head >= q->tensor.dim(0)) {
        m_message = tr("Layer %1 has no head %2.").arg(layer).arg(head);
        return;
    }
    const int64_t T = q->tensor.dim(1);
    if (T > kMaxTokens) {
        m_message = tr("The comparison runs this head through every kernel densely: %1 × %1 weights per kernel, "
                       "computed on the spot. That is for small inputs only: this one has %1 tokens, the limit is %2. "
                       "Shorten the text to compare kernels (the time plot shows how they scale).")
                        .arg(T)
                        .arg(kMaxTokens);
        return;
    }
    // Only the job's own copies of the head's Q, K, V (a slice shares the trace's storage, which the trace
    // pointer keeps alive) cross to the worker.
    auto job = [trace = m_input.trace, q = q->tensor.slice(head), k = k->tensor.slice(head), v = v->tensor.slice(head),
                   causal = m_input.causal, padding = m_input.padding]() {
        Comparison c;
        QElapsedTimer timer;
        timer.start();
        try {
            c.entries = attention::compareKernels(q, k, v, causal, padding);
        } catch (const Error &e) {
            c.message = QString::fromStdString(e.what());
        }
        c.milliseconds = double(timer.nsecsElapsed()) / 1e6;
        return c;
    };
    m_message = tr("Comparing the kernels on layer %1, head %2 …").arg(layer).arg(head);
    m_job.start(std::move(job), drawnHeadless(this));
}

// The latest comparison finished.
void KernelCompareView::adopt(Comparison c)
{
    m_entries = std::move(c.entries);
    m_message = c.message;
    m_computeMs = c.milliseconds;
    rebuildImages();
    update();
}

void KernelCompareView::rebuildImages()
{
    m_images.assign(m_entries.size(), QImage());
    std::unique_ptr<ColorLut> lut;
    try {
        lut = std::make_unique<ColorLut>(m_spec.colormap);
    } catch (const Error &) {
        lut = std::make_unique<ColorLut>("viridis");
    }
    float upper = 0; // one scale for every panel, so their colours compare
    for (const auto &e : m_entries)
        for (int64_t i = 0; i < e.weights.numel(); ++i)
            upper = std::max(upper, e.weights.data()[i]);
    upper = upper > 0 ? upper : 1.0f;
    const bool log = m_spec.scale == "log";
    const float floor = upper * 1e-4f, logSpan = std::log(upper / floor);
    for (size_t n = 0; n < m_entries.size(); ++n) {
        const auto &e = m_entries[n];
        if (e.skipped)
            continue;
        const int T = static_cast<int>(e.weights.dim(0));
        QImage image(T, T, QImage::Format_RGB32);
        for (int r = 0; r < T; ++r) {
            auto *line = reinterpret_cast<QRgb *>(image.scanLine(r));
            for (int c = 0; c < T; ++c) {
                const float w = e.weights.data()[r * T + c];
                const float t = log ? std::log(std::max(w, floor) / floor) / logSpan : w / upper;
                line[c] = e.mask.data()[r * T + c] == 0.0f ? lut->masked() : lut->map(t);
            }
        }
        m_images[n] = image;
    }
}

QString KernelCompareView::panelTitle(int i) const
{
    return QString::fromStdString(m_entries.at(static_cast<size_t>(i)).description);
}

QString KernelCompareView::errorText(int i) const
{
    const auto &e = m_entries.at(static_cast<size_t>(i));
    if (e.skipped)
        return tr("not run: %1").arg(QString::fromStdString(e.reason));
    // No-break spaces inside each figure: the panel wraps between figures, never inside one.
    return QStringLiteral("max\u00A0|ΔC|\u00A0%1 · mean\u00A0%2 · KL\u00A0%3 · drops\u00A0%4\u00A0%")
        .arg(number(e.maxAbsError), number(e.meanAbsError), number(e.meanKl))
        .arg(100.0 * e.meanDroppedWeight, 0, 'f', 0);
}

void KernelCompareView::resizeEvent(QResizeEvent *event)
{
    View::resizeEvent(event);
    layoutPlot();
}

void KernelCompareView::layoutPlot()
{
    const int w = static_cast<int>(width() * kPlotShare);
    m_plot->setGeometry(width() - w - kMargin, kMargin, w, height() - 2 * kMargin);
}

QRect KernelCompareView::panelArea() const
{
    const int plotWidth = static_cast<int>(width() * kPlotShare);
    return QRect(kMargin, kMargin, width() - plotWidth - 3 * kMargin, height() - 2 * kMargin);
}

void KernelCompareView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const ThemeColors theme = themeColors(m_spec.theme);
    p.fillRect(rect(), theme.background);
    p.setPen(theme.text);
    const QRect area = panelArea();
    if (!m_message.isEmpty() || m_entries.empty()) {
        p.setFont(sizedFont(font(), 13));
        p.drawText(area, Qt::AlignCenter | Qt::TextWordWrap, m_message);
    } else {
        p.setFont(sizedFont(font(), 12, true));
        const QFontMetrics fm(p.font());
        const QString title = tr("Layer %1, head %2 under every kernel (T = %3; errors against full attention)")
                                  .arg(m_spec.layer)
                                  .arg(std::max(0, m_spec.head))
                                  .arg(m_entries.front().weights.dim(0));
        p.drawText(area.left(), area.top() + fm.ascent(), fm.elidedText(title, Qt::ElideRight, area.width()));
        const int cols = m_entries.size() > 6 ? 4 : 3;
        const int rows = (static_cast<int>(m_entries.size()) + cols - 1) / cols;
        const QRect grid = area.adjusted(0, fm.height() + 8, 0, 0);
        const int cw = grid.width() / cols, ch = grid.height() / rows;
        for (int i = 0; i < panelCount(); ++i)
            paintPanel(p, i, QRect(grid.left() + (i % cols) * cw, grid.top() + (i / cols) * ch, cw, ch));
    }
    if (!m_benchMessage.isEmpty()) {
        p.setPen(theme.text);
        p.setFont(sizedFont(font(), 11));
        p.drawText(m_plot->geometry().adjusted(20, 60, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, m_benchMessage);
    }
}

void KernelCompareView::paintPanel(QPainter &p, int i, const QRect &cell) const
{
    const ThemeColors theme = themeColors(m_spec.theme);
    const QRect inner = cell.adjusted(4, 2, -6, -6);
    const QFont titleFont = sizedFont(font(), 9.5, true), textFont = sizedFont(font(), 8);
    const QFontMetrics tm(titleFont), fm(textFont);
    const auto &entry = m_entries[size_t(i)];
    // "bigbird (block=2, …, seed=0)" -> "bigbird" in bold over its parameters; the seed is noise to a reader.
    QString params = panelTitle(i).mid(static_cast<int>(entry.spec.kind.size())).trimmed();
    params.remove(QStringLiteral(", seed=0")).remove(QStringLiteral("seed=0"));
    params = params == QStringLiteral("()") ? QString() : params;
    p.setPen(theme.text);
    p.setFont(titleFont);
    p.drawText(inner.left(), inner.top() + tm.ascent(), QString::fromStdString(entry.spec.kind));
    p.setFont(textFont);
    const QRect textBox(inner.left(), inner.top() + tm.height(), inner.width(), 6 * fm.height());
    const QString errors = entry.skipped ? tr("not run (see below)") : errorText(i);
    p.drawText(textBox, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
        fm.elidedText(params, Qt::ElideRight, inner.width() * 2 - 20) + "\n" + errors);
    const int top = textBox.bottom() + 4; // the same for every panel, so the maps line up
    const int side = std::max(8, std::min(inner.width(), inner.bottom() - top));
    const QRect thumb(inner.left(), top, side, side);
    const QImage &image = m_images.size() > size_t(i) ? m_images[size_t(i)] : QImage();
    if (image.isNull()) {
        p.setPen(theme.frame);
        p.drawRect(thumb);
        p.setPen(theme.text);
        p.drawText(thumb.adjusted(6, 6, -6, -6), Qt::AlignCenter | Qt::TextWordWrap,
            tr("not run: %1").arg(QString::fromStdString(m_entries[size_t(i)].reason)));
        return;
    }
    p.drawImage(thumb, image); // nearest-neighbour: one token per block of pixels
    p.setPen(theme.frame);
    p.drawRect(thumb.adjusted(0, 0, -1, -1));
}

} // namespace atlas
