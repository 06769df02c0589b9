#include "kernels/kernelcompareview.h"

#include "kernels/kernels.h"

#include "trace/names.h"

#include "views/plottheme.h"

#include "views/colormaps.h"
#include "views/heatmapplot.h"
#include "views/plottitle.h"
#include "views/viewfonts.h"

#include "attention/attentionsweep.h"
#include "io/resourcepaths.h"
#include "util/error.h"

#include <QPainter>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

constexpr double kPlotShare = 0.36; // of the width, for the time plot on the right

// Tableau 10: distinct on light and dark backgrounds.
QColor seriesColor(int i)
{
    static const QRgb colors[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948, 0xb07aa1, 0x9c755f};
    return QColor(colors[static_cast<size_t>(i) % 8]);
}

} // namespace

KernelCompareView::KernelCompareView(QWidget *parent)
    : View(parent)
    , m_plot(new QCustomPlot(this))
    , m_benchFile(defaultBenchmarkFile())
{
    m_plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    m_plot->xAxis->setLabel(tr("sequence length N (tokens)"));
    m_plot->yAxis->setLabel(tr("time per head (ms, median)"));
    m_plot->legend->setVisible(true);
    // The legend gets rows of its own under the axes, two entries a row: inside the axes it covers the curves.
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->legend->setWrap(2);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(
        0, 0, new PlotTitle(m_plot, tr("Measured time vs N"), sizedFont(font(), 10, true)));
    loadBenchmarks();
}

QString KernelCompareView::defaultBenchmarkFile()
{
    return QString::fromStdString(resourceDirectory("ATLAS_BENCHMARKS_DIR", "benchmarks") + "/attention-sweep.json");
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

// Four panels of about 24 characters and up to ten lines of text over a 60-pixel map, two rows, a two-line
// title, and the time plot beside them: at the current font size (the app's zoom).
QSize KernelCompareView::minimumSizeHint() const
{
    if (!m_message.isEmpty() || m_entries.empty()) // only a message (and the plot): no panels to make room for
        return {QFontMetrics(sizedFont(font(), 13)).averageCharWidth() * 50, 320};
    const QFontMetrics text(sizedFont(font(), 8)), title(sizedFont(font(), 12, true));
    const int panels = 4 * (19 * text.averageCharWidth() + 10);
    return {int(panels / (1 - kPlotShare)) + 3 * kViewMargin, 3 * title.height() + 2 * (10 * text.height() + 80)};
}

void KernelCompareView::loadBenchmarks()
{
    m_plot->clearGraphs();
    m_benchMessage.clear();
    attention::AttentionSweepFile file;
    try {
        file = attention::readAttentionSweep(m_benchFile.toStdString());
        if (file.kernels.empty())
            m_benchMessage = tr("No measured times in %1: no kernels.").arg(m_benchFile);
    } catch (const Error &e) {
        m_benchMessage = tr("No measured times: %1 (make the file with bench-attention --sweep --json).")
                             .arg(QString::fromStdString(e.what()));
    }
    for (size_t i = 0; i < file.kernels.size(); ++i) {
        const attention::KernelSweep &k = file.kernels[i];
        QCPGraph *g = m_plot->addGraph();
        const QString kind = QString::fromStdString(k.kind);
        g->setName(
            QStringLiteral("%1 — %2").arg(kind, QString::fromStdString(attention::attentionKernel(k.kind).complexity)));
        g->setPen(QPen(seriesColor(int(i)), 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        for (const attention::SweepPoint &point : k.points)
            g->addData(double(point.n), point.medianMs);
    }
    m_plot->xAxis2->setVisible(false);
    if (!file.kernels.empty()) {
        m_plot->rescaleAxes();
        m_plot->xAxis->scaleRange(1.15, m_plot->xAxis->range().center());
        m_plot->yAxis->scaleRange(1.3, m_plot->yAxis->range().center());
        auto *title = qobject_cast<QCPTextElement *>(m_plot->plotLayout()->element(0, 0));
        title->setText(
            tr("Measured time vs N (one head, d_head %1)\n%2 · %3\nlegend: kernel — complexity (Tay et al. 2020)")
                .arg(file.dHead)
                .arg(QString::fromStdString(file.machine), QString::fromStdString(file.date)));
    }
}

void KernelCompareView::refresh()
{
    // Redrawn when the analysis, the head asked for or the colours change.
    const std::string drawn = m_spec.colormap + "/" + m_spec.scale + "/" + std::to_string(m_spec.layer) + "/"
        + std::to_string(m_spec.head) + "/" + std::to_string(reinterpret_cast<uintptr_t>(m_input.analysis.result.get()))
        + "/" + m_input.analysis.problem.toStdString();
    if (drawn != m_drawn) {
        m_drawn = drawn;
        adoptAnalysis();
    }
    applyPlotTheme(m_plot, m_spec.theme);
    qobject_cast<QCPTextElement *>(m_plot->plotLayout()->element(0, 0))->setFont(sizedFont(font(), 10, true));
    m_plot->legend->setFont(sizedFont(font(), 10));
    m_plot->legend->setBrush(themeColors(m_spec.theme).background);
    m_plot->legend->setTextColor(themeColors(m_spec.theme).text);
    m_plot->replot();
    update();
}

// The session's comparison for this spec, or why there is none yet.
void KernelCompareView::adoptAnalysis()
{
    const auto *comparison = currentAnalysis<KernelComparisonAnalysis>();
    m_entries = comparison ? comparison->entries : std::vector<attention::KernelComparisonEntry> {};
    m_computeMs = comparison ? comparison->milliseconds : 0.0;
    if (comparison)
        m_message.clear();
    else if (!m_input.analysis.problem.isEmpty())
        m_message = m_input.analysis.problem;
    else
        m_message = tr("Comparing the kernels on layer %1, head %2 …").arg(m_spec.layer).arg(std::max(0, m_spec.head));
    rebuildImages();
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
    m_maskedColor = QColor(lut->masked());
    float upper = 0, minPositive = std::numeric_limits<float>::max(); // one scale for every panel: colours compare
    for (const auto &e : m_entries)
        for (int64_t i = 0; i < e.weights.numel(); ++i) {
            const float w = e.weights.data()[i];
            upper = std::max(upper, w);
            if (w > 0)
                minPositive = std::min(minPositive, w);
        }
    const ColorScale scale(m_spec.scale == "log", upper, minPositive);
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
                line[c] = e.mask.data()[r * T + c] == 0.0f ? lut->masked() : lut->map(scale.place(w));
            }
        }
        m_images[n] = image;
    }
}

// The masked cells (mask 0) of a thumbnail hatched over their grey, as the heat maps' MaskedCellsLayer does, where
// a cell is large enough (3 px) for the hatching to read as such.
void KernelCompareView::hatchMaskedCells(QPainter &p, const QRect &thumb, const Tensor &mask, const QColor &hatch)
{
    const int T = int(mask.dim(0));
    const double cell = double(thumb.width()) / std::max(1, T);
    if (cell < 3)
        return;
    QVector<QRectF> rects;
    for (int r = 0; r < T; ++r)
        for (int c = 0; c < T; ++c) {
            if (mask.data()[r * T + c] != 0.0f)
                continue;
            const int c0 = c; // a run of masked cells: [c0, c]
            while (c + 1 < T && mask.data()[r * T + c + 1] == 0.0f)
                ++c;
            rects.append(QRectF(thumb.left() + c0 * cell, thumb.top() + r * cell, (c + 1 - c0) * cell, cell));
        }
    p.save();
    p.setPen(Qt::NoPen);
    p.setBrush(QBrush(hatch, Qt::BDiagPattern));
    p.drawRects(rects);
    p.restore();
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
    return QStringLiteral("max\u00A0|ΔC|\u00A0%1 · mean\u00A0%2 · KL\u00A0%3 · drops\u00A0%4")
        .arg(formatNumber(e.maxAbsError, 2), formatNumber(e.meanAbsError, 2), formatNumber(e.meanKl, 2),
            formatPercent(e.meanDroppedWeight, 2));
}

void KernelCompareView::resizeEvent(QResizeEvent *event)
{
    View::resizeEvent(event);
    layoutPlot();
}

void KernelCompareView::layoutPlot()
{
    const int w = static_cast<int>(width() * kPlotShare);
    m_plot->setGeometry(width() - w - kViewMargin, kViewMargin, w, height() - 2 * kViewMargin);
}

QRect KernelCompareView::panelArea() const
{
    const int plotWidth = static_cast<int>(width() * kPlotShare);
    return QRect(kViewMargin, kViewMargin, width() - plotWidth - 3 * kViewMargin, height() - 2 * kViewMargin);
}

void KernelCompareView::paintEvent(QPaintEvent *)
{
    clearClipped();
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
        const QString title = tr("Layer %1, head %2 under every kernel (T = %3; errors against full attention)")
                                  .arg(m_spec.layer)
                                  .arg(std::max(0, m_spec.head))
                                  .arg(m_entries.front().weights.dim(0));
        const QRect titleBox = p.fontMetrics().boundingRect(area, Qt::TextWordWrap, title);
        p.drawText(titleBox, Qt::TextWordWrap, title);
        const int cols = m_entries.size() > 8 ? 5 : m_entries.size() > 6 ? 4 : 3; // two rows where they fit
        const int rows = (static_cast<int>(m_entries.size()) + cols - 1) / cols;
        const QRect grid = area.adjusted(0, titleBox.height() + 8, 0, 0);
        const int cw = grid.width() / cols, ch = grid.height() / rows;
        const QFontMetrics fm(sizedFont(font(), 8));
        m_textHeight = 0; // the tallest panel text: every map starts below it
        for (int i = 0; i < panelCount(); ++i)
            m_textHeight = std::max(
                m_textHeight, fm.boundingRect(QRect(0, 0, cw - 10, 1000), Qt::TextWordWrap, panelText(i)).height());
        for (int i = 0; i < panelCount(); ++i)
            paintPanel(p, i, QRect(grid.left() + (i % cols) * cw, grid.top() + (i / cols) * ch, cw, ch));
    }
    if (!m_benchMessage.isEmpty()) {
        p.setPen(theme.text);
        p.setFont(sizedFont(font(), 11));
        p.drawText(m_plot->geometry().adjusted(20, 60, -20, -20), Qt::AlignCenter | Qt::TextWordWrap, m_benchMessage);
    }
}

// A panel's text under the kernel's name: its parameters, then its errors (or why it did not run).
QString KernelCompareView::panelText(int i) const
{
    const auto &entry = m_entries[size_t(i)];
    // "bigbird (block=2, …, seed=0)" -> "bigbird" in bold over its parameters; the seed is noise to a reader.
    QString params = panelTitle(i).mid(static_cast<int>(entry.spec.kind.size())).trimmed();
    params.remove(QStringLiteral(", seed=0")).remove(QStringLiteral("seed=0"));
    params = params == QStringLiteral("()") ? QString() : params;
    return (params.isEmpty() ? QString() : params + "\n") + (entry.skipped ? tr("not run") : errorText(i));
}

// A kernel's panel: its name, its parameters and errors (wrapped to the panel), then its weights as a square.
void KernelCompareView::paintPanel(QPainter &p, int i, const QRect &cell)
{
    const ThemeColors theme = themeColors(m_spec.theme);
    const QRect inner = cell.adjusted(4, 2, -6, -6);
    const QFont titleFont = sizedFont(font(), 9.5, true), textFont = sizedFont(font(), 8);
    const QFontMetrics tm(titleFont), fm(textFont);
    const auto &entry = m_entries[size_t(i)];
    p.setPen(theme.text);
    p.setFont(titleFont);
    p.drawText(inner.left(), inner.top() + tm.ascent(), QString::fromStdString(entry.spec.kind));
    p.setFont(textFont);
    const QString text = panelText(i);
    const QRect textBox
        = fm.boundingRect(QRect(inner.left(), inner.top() + tm.height(), inner.width(), 1000), Qt::TextWordWrap, text);
    p.drawText(textBox, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, text);
    const int top = inner.top() + tm.height() + m_textHeight + 4; // the same for every panel, so the maps line up
    if (textBox.bottom() > top || inner.bottom() - top < 24)
        noteClipped(text);
    const int side = std::max(8, std::min(inner.width(), inner.bottom() - top));
    const QRect thumb(inner.left(), top, side, side);
    const QImage &image = m_images.size() > size_t(i) ? m_images[size_t(i)] : QImage();
    if (image.isNull()) {
        p.setPen(theme.frame);
        p.drawRect(thumb);
        p.setPen(theme.text);
        // The reason's first clause in the box ("linformer cannot be causal"), at the largest size down to 6 pt
        // that fits it whole.
        const QRect box = thumb.adjusted(4, 4, -4, -4);
        const QString reason
            = tr("not run: %1")
                  .arg(QString::fromStdString(m_entries[size_t(i)].reason).section(QLatin1Char(':'), 0, 0));
        QFont small = textFont;
        while (small.pointSizeF() > 6
            && QFontMetrics(small).boundingRect(box, Qt::AlignCenter | Qt::TextWordWrap, reason).height()
                > box.height())
            small.setPointSizeF(small.pointSizeF() - 0.5);
        p.setFont(small);
        if (QFontMetrics(small).boundingRect(box, Qt::AlignCenter | Qt::TextWordWrap, reason).height() > box.height())
            noteClipped(reason);
        p.drawText(box, Qt::AlignCenter | Qt::TextWordWrap, reason);
        return;
    }
    p.drawImage(thumb, image); // nearest-neighbour: one token per block of pixels
    hatchMaskedCells(p, thumb, entry.mask, m_maskedColor.darker(170));
    p.setPen(theme.frame);
    p.drawRect(thumb.adjusted(0, 0, -1, -1));
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::kernels::makeView(QWidget *parent)
{
    return std::make_unique<KernelCompareView>(parent);
}
