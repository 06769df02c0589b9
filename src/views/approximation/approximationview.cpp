#include "approximation/approximationview.h"

#include "approximation/approximation.h"

#include "trace/names.h"

#include "views/plottheme.h"

#include "views/approximationerrorplot.h"
#include "views/colormaps.h"
#include "views/heatmapplot.h"
#include "views/viewfonts.h"

#include "util/error.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QRadioButton>
#include <QSlider>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace atlas {

namespace {

using attention::ApproximationSweep;

constexpr int kMapSpacing = 6;

// (T,T) weights for drawing: cells the mask forbids become −∞ (hatched by HeatmapPlot).
std::shared_ptr<std::vector<float>> drawnCells(const Tensor &weights, const Tensor &mask)
{
    auto cells = std::make_shared<std::vector<float>>(weights.values().begin(), weights.values().end());
    for (size_t i = 0; i < cells->size(); ++i)
        if (mask.data()[i] == 0.0f)
            (*cells)[i] = -std::numeric_limits<float>::infinity();
    return cells;
}

} // namespace

ApproximationView::ApproximationView(QWidget *parent)
    : View(parent)
    , m_maps(new QWidget(this))
    , m_exact(new HeatmapPlot(m_maps))
    , m_approx(new HeatmapPlot(m_maps))
    , m_plot(new ApproximationErrorPlot(this))
    , m_summary(new QLabel(this))
    , m_caption(new QLabel(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 6);
    buildControls(layout);
    auto *body = new QHBoxLayout;
    body->setSpacing(4);
    body->addWidget(m_maps, 2); // two maps, each with its colour bar: 70 px of axes at 3 : 2 on a 720-line projector
    body->addWidget(m_plot, 1);
    layout->addLayout(body, 1);
    m_maps->installEventFilter(this);
    layout->addWidget(m_summary); // full width under the maps and the plot: a few wide lines
    layout->addWidget(m_caption);
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_caption->setWordWrap(true);
    // Subscripts (wᵢⱼ) come from a fallback font whose painted width can exceed the measured one by a few pixels.
    m_caption->setContentsMargins(0, 0, 16, 0);
    m_summary->setContentsMargins(0, 0, 16, 0);
    m_plot->setToolTip(errorsDefinition());
    m_summary->setToolTip(errorsDefinition());
    m_exact->setValueLabel(tr("weight"));
    m_approx->setValueLabel(tr("weight (same scale)"));
    for (HeatmapPlot *plot : {m_exact, m_approx}) {
        plot->setHoverText([this](int row, int col) { return hoverText(row, col); });
        // One colour scale for both maps: the exact weights' range, whatever the plot computes for itself.
        connect(plot->colorMap(), &QCPColorMap::dataRangeChanged, this, [this, plot](const QCPRange &range) {
            if (m_hasRange && range != m_range)
                plot->colorMap()->setDataRange(m_range);
        });
    }
    setAutoFillBackground(true);
    applyTheme();
    showMessage(tr("No trace yet."));
}

// Two heat maps beside the error plot, the controls above, four lines of summary and three of caption below, at
// the current font size.
QSize ApproximationView::minimumSizeHint() const
{
    if (!m_message.isEmpty()) // a message on the left map alone
        return {QFontMetrics(sizedFont(font(), 13)).averageCharWidth() * 40, 240};
    const QSize map = m_exact->minimumSizeHint();
    const int line = fontMetrics().height();
    const int plot = std::max(map.width() + 40, 36 * fontMetrics().averageCharWidth());
    return {2 * map.width() + kMapSpacing + plot + 24, 2 * line + std::max(map.height(), 10 * line) + 7 * line + 24};
}

bool ApproximationView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_maps && event->type() == QEvent::Resize)
        layOutMaps();
    return View::eventFilter(watched, event);
}

void ApproximationView::layOutMaps()
{
    m_maps->setMinimumSize(2 * m_exact->minimumSizeHint().width() + kMapSpacing, m_exact->minimumSizeHint().height());
    // Two plots of exactly one width: a box layout may give them widths one pixel apart, and then HeatmapPlot's
    // choice of tick labels (every token, or every fifth) can differ between the two.
    const int w = (m_maps->width() - kMapSpacing) / 2, h = m_maps->height();
    m_exact->setGeometry(0, 0, w, h);
    m_approx->setGeometry(w + kMapSpacing, 0, w, h);
}

void ApproximationView::buildControls(QLayout *layout)
{
    m_controlRow = new QWidget(this);
    auto *row = new QHBoxLayout(m_controlRow);
    row->setContentsMargins(0, 0, 0, 0);
    m_kernels = new QButtonGroup(this);
    for (const attention::AttentionKernelKind &k : attention::attentionKernels()) // the kernels with a size to sweep
        if (!k.approximation.key.empty()) {
            auto *button = new QRadioButton(QString::fromStdString(k.title), this);
            button->setToolTip(definition(k.kind, false));
            m_kernels->addButton(button);
            m_kernelButtons.emplace_back(k.kind, button);
        }
    m_kernelButtons.front().second->setChecked(true);
    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setRange(0, 0);
    m_slider->setPageStep(1);
    m_slider->setTickPosition(QSlider::TicksBelow);
    m_slider->setMinimumWidth(180);
    m_valueLabel = new QLabel(this);
    m_valueLabel->setMinimumWidth(110);
    m_status = new QLabel(this);
    row->addWidget(new QLabel(tr("Approximation:"), this));
    for (const auto &[kind, button] : m_kernelButtons)
        row->addWidget(button);
    row->addSpacing(24);
    row->addWidget(m_slider, 1);
    row->addWidget(m_valueLabel);
    row->addSpacing(24);
    row->addWidget(m_status, 1);
    layout->addWidget(m_controlRow);
    connect(m_kernels, &QButtonGroup::buttonClicked, this, [this](QAbstractButton *b) {
        for (const auto &[kind, button] : m_kernelButtons)
            if (button == b)
                chooseKernel(kind);
    });
    connect(m_slider, &QSlider::valueChanged, this, &ApproximationView::chooseIndex);
}

void ApproximationView::applyTheme()
{
    const ThemeColors colors = themeColors(m_spec.theme);
    QPalette pal = palette();
    pal.setColor(QPalette::Window, colors.background);
    pal.setColor(QPalette::WindowText, colors.text);
    pal.setColor(QPalette::Base, colors.field);
    pal.setColor(QPalette::Text, colors.text);
    pal.setColor(QPalette::Button, colors.control);
    pal.setColor(QPalette::ButtonText, colors.text);
    setPalette(pal);
    for (HeatmapPlot *plot : {m_exact, m_approx})
        plot->setTheme(m_spec.theme);
    m_plot->setTheme(m_spec.theme);
}

QRadioButton *ApproximationView::kernelButton(const std::string &kind) const
{
    for (const auto &[k, button] : m_kernelButtons)
        if (k == kind)
            return button;
    return nullptr;
}

QString ApproximationView::valueName() const
{
    return QString::fromStdString(
        attention::attentionKernel(m_spec.get(views::approximation::kApproximation)).approximation.symbol);
}

QString ApproximationView::kernelName() const
{
    return QString::fromStdString(attention::attentionKernel(m_spec.get(views::approximation::kApproximation)).title);
}

QString ApproximationView::definition(const std::string &kernel, bool causalModel)
{
    const attention::AttentionKernelKind &kind = attention::attentionKernel(kernel);
    QString text = QString::fromStdString(kind.approximation.weights);
    if (causalModel && !kind.causal)
        text += tr(" %1 cannot be causal (%2), so for this causal model both maps are bidirectional attention on the "
                   "head's own Q, K, V.")
                    .arg(QString::fromStdString(kind.title), QString::fromStdString(kind.notCausal));
    return text;
}

QString ApproximationView::caption() const
{
    return definition(m_spec.get(views::approximation::kApproximation), m_input.causal);
}

QString ApproximationView::errorsDefinition()
{
    return tr("Errors are against exact softmax attention on the same Q, K, V: the mean over query rows of "
              "Σⱼ |wᵢⱼ − pᵢⱼ| (left axis) and the mean |ΔC| of the context (right axis), mean of %1 seeds with "
              "their min–max band; the right map is seed 0.")
        .arg(ApproximationAnalysis::kSeeds);
}

int ApproximationView::selectedValue() const
{
    if (!m_sweep || m_index < 0 || m_index >= int(m_sweep->points.size()))
        return 0;
    return m_sweep->points[size_t(m_index)].value;
}

void ApproximationView::refresh()
{
    layOutHidden(this);
    layOutMaps();
    applyTheme();
    {
        const QSignalBlocker block(m_kernels);
        if (QRadioButton *button = kernelButton(m_spec.get(views::approximation::kApproximation)))
            button->setChecked(true);
    }
    for (HeatmapPlot *plot : {m_exact, m_approx}) {
        try {
            plot->setColormap(m_spec.colormap);
        } catch (const Error &) {
            plot->setColormap("viridis");
        }
    }
    m_caption->setText(caption());
    m_exact->setToolTip(m_caption->text());
    m_approx->setToolTip(m_caption->text());
    adoptAnalysis();
}

// The session's sweep for this spec, or why there is none yet.
void ApproximationView::adoptAnalysis()
{
    const std::shared_ptr<const ViewAnalysis> &result = m_input.analysis.result;
    const auto *analysis = currentAnalysis<ApproximationAnalysis>();
    if (analysis == nullptr) {
        m_drawnAnalysis.reset();
        const int T = int(m_input.tokens.size());
        if (!m_input.analysis.problem.isEmpty()) {
            m_status->clear();
            showMessage(m_input.analysis.problem);
            return;
        }
        const size_t sizes
            = T > 0 ? attention::defaultSweepValues(m_spec.get(views::approximation::kApproximation), T).size() : 0;
        m_status->setText(tr("computing… %1, %2 sizes × %3 seeds, T = %4")
                              .arg(kernelName())
                              .arg(sizes)
                              .arg(ApproximationAnalysis::kSeeds)
                              .arg(T));
        showMessage(tr("Computing %1 for %2 sizes × %3 seeds…")
                        .arg(kernelName())
                        .arg(sizes)
                        .arg(ApproximationAnalysis::kSeeds));
        return;
    }
    if (result != m_drawnAnalysis) {
        m_drawnAnalysis = result;
        m_message.clear();
        m_sweep = std::shared_ptr<const ApproximationSweep>(result, &analysis->sweep);
        m_computeMs = analysis->milliseconds;
        m_exactCells.reset();
        m_status->setText(tr("%1 sizes × %2 seeds in %3 ms")
                              .arg(m_sweep->points.size())
                              .arg(m_sweep->seeds)
                              .arg(formatNumber(std::round(m_computeMs))));
    }
    showSweep(); // a new sweep, or a new selection, scale or colour map on the same one
}

void ApproximationView::showMessage(const QString &text)
{
    m_message = text;
    m_sweep.reset();
    m_hasRange = false;
    m_exact->showMessage(text);
    m_approx->showMessage(QString());
    m_summary->clear();
    m_plot->setSweep(nullptr);
    m_plot->hide(); // a message never sits beside the axes of a sweep that is gone (issue 28)
}

void ApproximationView::showSweep()
{
    m_plot->show();
    const ApproximationSweep &s = *m_sweep;
    const int T = int(s.T);
    int index = int(s.points.size()) / 2; // approximation_value 0: the middle of the sweep
    if (m_spec.get(views::approximation::kApproximationValue) > 0) {
        double best = std::numeric_limits<double>::max(); // the nearest value on the log axis
        for (size_t i = 0; i < s.points.size(); ++i) {
            const double distance
                = std::abs(std::log(double(s.points[i].value) / m_spec.get(views::approximation::kApproximationValue)));
            if (distance < best) {
                best = distance;
                index = int(i);
            }
        }
    }
    m_index = index;
    {
        const QSignalBlocker block(m_slider);
        m_slider->setRange(0, std::max(0, int(s.points.size()) - 1));
        m_slider->setValue(m_index);
    }
    const bool log = m_spec.scale == "log";
    if (!s.hasWeightErrors) {
        m_hasRange = false;
        m_exact->showMessage(tr("%1 tokens: the weight matrices are drawn up to %2 tokens (each is T × T, for every "
                                "size and seed). The plot shows the error of the context alone.")
                                 .arg(T)
                                 .arg(attention::kMaxDenseSweepTokens));
        m_approx->showMessage(QString());
    } else if (!m_exactCells || m_exact->logScale() != log) {
        m_exactCells = drawnCells(s.exactWeights, s.mask);
        float upper = 0, lowest = std::numeric_limits<float>::max();
        for (float w : *m_exactCells) {
            upper = std::max(upper, w);
            if (w > 0)
                lowest = std::min(lowest, w);
        }
        upper = upper > 0 ? upper : 1.0f;
        m_range = log ? QCPRange(std::max<double>(lowest, upper * 1e-6), upper) : QCPRange(0, upper);
        m_hasRange = true;
        const QStringList labels = tokenLabels(m_input, T);
        m_exact->setLabels(labels, labels);
        m_exact->setLogScale(log);
        m_exact->setTitle(tr("Exact softmax")); // short: a wide title squeezes the colour bar out
        m_exact->setMatrix(m_exactCells->data(), T, T, m_exactCells);
        m_exact->colorMap()->setDataRange(m_range);
    }
    m_plot->setSweep(m_sweep);
    showSelected();
}

void ApproximationView::showSelected()
{
    if (!m_sweep || m_sweep->points.empty())
        return;
    const ApproximationSweep &s = *m_sweep;
    m_index = std::clamp(m_index, 0, int(s.points.size()) - 1);
    const attention::ApproximationPoint &p = s.points[size_t(m_index)];
    const QString name = QStringLiteral("%1 = %2").arg(valueName()).arg(p.value);
    m_valueLabel->setText(name); // what the size counts is its tooltip: the label stays narrow
    m_valueLabel->setToolTip(QString::fromStdString(
        attention::attentionKernel(m_spec.get(views::approximation::kApproximation)).approximation.counts));
    QString outside;
    if (s.hasWeightErrors && !p.weights.empty()) {
        const int T = int(s.T);
        m_approxCells = drawnCells(p.weights, s.mask);
        float lo = std::numeric_limits<float>::max(), hi = -lo;
        int64_t out = 0, cells = 0;
        for (float w : *m_approxCells) {
            if (std::isinf(w))
                continue;
            lo = std::min(lo, w);
            hi = std::max(hi, w);
            out += (w < m_range.lower || w > m_range.upper) ? 1 : 0;
            ++cells;
        }
        if (out > 0)
            outside = tr("<br>Its weights span %1 … %2: %3 of the cells fall outside the exact scale (drawn in "
                         "its end colours).")
                          .arg(formatNumber(lo, 3), formatNumber(hi, 3))
                          .arg(formatPercent(double(out) / double(std::max<int64_t>(1, cells)), 2));
        const QStringList labels = tokenLabels(m_input, T);
        m_approx->setLabels(labels, labels);
        m_approx->setLogScale(m_spec.scale == "log");
        m_approx->setTitle(tr("%1, %2").arg(kernelName(), name)); // short: a wide title squeezes the colour bar
        m_approx->setMatrix(m_approxCells->data(), T, T, m_approxCells);
        m_approx->colorMap()->setDataRange(m_range);
    }
    const auto range = [](const attention::SweepStat &st) {
        return QStringLiteral("%1 [%2 – %3]")
            .arg(formatNumber(st.mean, 3), formatNumber(st.min, 3), formatNumber(st.max, 3));
    };
    QString text = tr("<b>%1, %2</b> — mean [min – max] over %3 seeds:<br>").arg(kernelName(), name).arg(s.seeds);
    if (!s.causal && m_input.causal)
        text += tr("<i>Both maps bidirectional: %1 cannot be causal.</i><br>").arg(kernelName());
    if (s.hasWeightErrors)
        text += tr("weights: row Σ|Δw| %1 · KL %2<br>").arg(range(p.rowL1), formatNumber(p.kl.mean, 3));
    text += tr("context: mean |ΔC| %1 · max |ΔC| %2").arg(range(p.meanAbsError), formatNumber(p.maxAbsError.mean, 3));
    m_summary->setText(text + outside);
    m_plot->setSelected(m_index);
}

void ApproximationView::chooseKernel(const std::string &kernel)
{
    if (kernel == m_spec.get(views::approximation::kApproximation))
        return;
    m_spec.set(views::approximation::kApproximation, kernel);
    m_spec.set(views::approximation::kApproximationValue, 0);
    refresh();
    emit specEdited(m_spec);
}

void ApproximationView::chooseIndex(int index)
{
    if (!m_sweep || index < 0 || index >= int(m_sweep->points.size()) || index == m_index)
        return;
    m_index = index;
    m_spec.set(views::approximation::kApproximationValue, m_sweep->points[size_t(index)].value);
    showSelected();
    emit specEdited(m_spec);
}

QString ApproximationView::hoverText(int row, int col) const
{
    if (!m_sweep || !m_sweep->hasWeightErrors || row >= m_sweep->T || col >= m_sweep->T || m_index < 0)
        return {};
    const ApproximationSweep &s = *m_sweep;
    const size_t cell = size_t(row) * size_t(s.T) + size_t(col);
    const QString prefix = cellPrefix(m_input, row, col);
    if (s.mask.data()[cell] == 0.0f)
        return prefix + (s.causal && col > row ? tr(": a future token, masked") : tr(": padding, masked"));
    const double exact = s.exactWeights.data()[cell];
    const attention::ApproximationPoint &p = s.points[size_t(m_index)];
    const double approx = p.weights.data()[cell];
    return prefix
        + tr("\nexact softmax weight %1\n%2, %3 = %4 (seed 0): %5 (Δ %6)")
              .arg(formatNumber(exact), kernelName(), valueName())
              .arg(p.value)
              .arg(formatNumber(approx), formatNumber(approx - exact));
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::approximation::makeView(QWidget *parent)
{
    return std::make_unique<ApproximationView>(parent);
}
