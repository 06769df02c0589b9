#include "nexttoken/nexttokenview.h"
#include "nexttoken/nexttoken.h"

#include "engine/temperature.h"
#include "views/plottitle.h"
#include "views/viewfonts.h"

#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStackedLayout>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace atlas {
namespace {

// The temperature slider: 0 … 100 on a log scale from 0.1 to 10, 50 = 1.
constexpr int kSliderSteps = 100;
double temperatureOf(int slider)
{
    return std::pow(10.0, (slider - kSliderSteps / 2) / double(kSliderSteps / 2));
}
int sliderOf(double temperature)
{
    return std::clamp(
        int(std::lround(std::log10(temperature) * (kSliderSteps / 2) + kSliderSteps / 2)), 0, kSliderSteps);
}

} // namespace

NextTokenView::NextTokenView(QWidget *parent)
    : View(parent)
    , m_message(new QLabel(this))
    , m_plot(new QCustomPlot(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(buildControls());
    auto *pages = new QWidget(this);
    m_stack = new QStackedLayout(pages);
    layout->addWidget(pages, 1);
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setMargin(20);
    m_stack->addWidget(m_message);
    m_stack->addWidget(m_plot);

    m_barsPlottable = new QCPBars(m_plot->yAxis, m_plot->xAxis); // horizontal: keys run down the y axis
    m_barsPlottable->setWidth(0.7);
    m_cutBarsPlottable = new QCPBars(m_plot->yAxis, m_plot->xAxis);
    m_cutBarsPlottable->setWidth(0.7);
    m_plot->yAxis->setRangeReversed(true); // bar 0, the most probable, on top
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->yAxis->setTickLength(0, 0); // no tick marks beside the token labels
    m_plot->yAxis->setSubTicks(false);
    m_plot->xAxis->setLabel(tr("probability"));
    m_plot->plotLayout()->insertRow(0);
    m_titleElement = new PlotTitle(m_plot, QString(), sizedFont(font(), 12, true));
    m_plot->plotLayout()->addElement(0, 0, m_titleElement);
    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &NextTokenView::showToolTip);
    showMessage(tr("Nothing to show yet: run the model"));
}

QString NextTokenView::message() const
{
    return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

void NextTokenView::showMessage(const QString &text)
{
    m_bars.clear();
    m_title.clear();
    m_position = -1;
    m_message->setFont(sizedFont(font(), 12));
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

void NextTokenView::refresh()
{
    applyTheme();
    if (!m_input.trace)
        return showMessage(tr("Nothing to show yet: run the model"));
    // A whole run keeps next_probs [T, V]; a run kept on demand computes the one row shown (engine/outputhead.h).
    const TraceEntry *e = m_input.trace->find("next_probs");
    if (e && (e->tensor.rank() != 2 || e->tensor.dim(0) == 0 || e->tensor.dim(1) == 0))
        return showMessage(tr("next_probs has shape %1; expected [T, V] with T, V > 0")
                               .arg(QString::fromStdString(e->tensor.shapeString())));
    const int tokens = e ? int(e->tensor.dim(0)) : int(m_input.tokenIds.size());
    const int position = m_spec.position < 0 ? tokens - 1 : m_spec.position;
    if (position >= tokens)
        return showMessage(tr("Position %1 is outside the input (%2 tokens)").arg(position).arg(tokens));
    QString problem;
    const Tensor row = findNextTokenProbs(m_input, {position}, &problem);
    if (row.numel() == 0)
        return showMessage(problem);
    m_position = position;
    syncControls(tokens);
    collectBars(row);
    drawChart();
    m_stack->setCurrentWidget(m_plot);
}

QWidget *NextTokenView::buildControls()
{
    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(6, 2, 6, 2);
    m_positionBox = new QSpinBox(m_controls);
    m_positionBox->setRange(-1, 0);
    m_positionBox->setSpecialValueText(tr("last"));
    m_positionBox->setToolTip(tr("The position whose next token is shown (last: the end of the input). "
                                 "A click on a token in Token lines chooses it too."));
    m_temperatureSlider = new QSlider(Qt::Horizontal, m_controls);
    m_temperatureSlider->setRange(0, kSliderSteps);
    m_temperatureSlider->setValue(sliderOf(1.0));
    m_temperatureSlider->setMinimumWidth(80); // the row fits a 1280 × 720 projector beside the panels
    m_temperatureSlider->setToolTip(tr("softmax(z / T): below 1 sharpens the distribution, above 1 flattens it; "
                                       "T = 1 is the model's own. Sampling with temperature T draws from these bars."));
    m_temperatureLabel = new QLabel(m_controls);
    m_topPBox = new QDoubleSpinBox(m_controls);
    m_topPBox->setRange(0.01, 1.0);
    m_topPBox->setSingleStep(0.05);
    m_topPBox->setDecimals(2);
    m_topPBox->setPrefix(tr("top-p "));
    m_topPBox->setToolTip(tr("Nucleus (top-p) sampling: keep the fewest most probable tokens whose probabilities sum "
                             "to p, and sample among them renormalised; the rest are drawn greyed as cut. 1 keeps "
                             "every token"));
    row->addWidget(m_positionBox);
    row->addSpacing(16);
    row->addWidget(new QLabel(tr("Temperature"), m_controls));
    row->addWidget(m_temperatureSlider, 1);
    row->addWidget(m_temperatureLabel);
    row->addSpacing(8);
    row->addWidget(m_topPBox);
    connect(m_positionBox, &QSpinBox::valueChanged, this, [this](int position) {
        if (position == m_spec.position)
            return;
        m_spec.position = position;
        refresh();
        emit specEdited(m_spec);
    });
    connect(m_temperatureSlider, &QSlider::valueChanged, this, [this](int value) {
        const double t = temperatureOf(value);
        if (sliderOf(m_spec.get(views::nexttoken::kTemperature)) == value)
            return;
        m_spec.set(views::nexttoken::kTemperature, t);
        refresh();
        emit specEdited(m_spec);
    });
    connect(m_topPBox, &QDoubleSpinBox::valueChanged, this, [this](double p) {
        if (std::abs(p - m_spec.get(views::nexttoken::kTopP)) < 1e-9)
            return;
        m_spec.set(views::nexttoken::kTopP, p);
        refresh();
        emit specEdited(m_spec);
    });
    return m_controls;
}

void NextTokenView::collectBars(const Tensor &probs)
{
    const int vocab = static_cast<int>(probs.dim(1));
    const float *modelRow = probs.data();
    const std::vector<double> reshaped = atTemperature(modelRow, vocab, m_spec.get(views::nexttoken::kTemperature));
    // Nucleus sampling's cut, made by the function the generator cuts with: ranks below `kept` are sampled.
    std::vector<int> order(size_t(vocab), 0);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(
        order.begin(), order.end(), [&](int a, int b) { return reshaped[size_t(a)] > reshaped[size_t(b)]; });
    std::vector<double> sorted(order.size());
    for (size_t i = 0; i < order.size(); ++i)
        sorted[i] = reshaped[size_t(order[i])];
    const double topP = m_spec.get(views::nexttoken::kTopP);
    const size_t kept = nucleusSize(sorted.data(), sorted.size(), topP);
    const double keptMass = std::accumulate(sorted.begin(), sorted.begin() + std::ptrdiff_t(kept), 0.0);
    const double renormalise = kept < sorted.size() ? 1.0 / keptMass : 1.0;
    m_bars.clear();
    for (size_t rank = 0; rank < order.size() && int(rank) < m_spec.topK; ++rank) {
        const int id = order[rank];
        const bool cut = rank >= kept;
        const double p = cut ? sorted[rank] : sorted[rank] * renormalise;
        m_bars.push_back({id, vocabularyLabel(m_input, id), double(float(p)), cut}); // as the trace holds it
    }
    const QString token
        = m_position < m_input.tokens.size() ? m_input.tokens.at(m_position) : QStringLiteral("#%1").arg(m_position);
    // An encoder (austen-mlm) predicts no next token: its output at a position names the token that belongs there.
    m_title = m_input.causal ? tr("Next token after '%1' (position %2)").arg(token).arg(m_position)
                             : tr("Token at position %1 ('%2'), as the encoder names it").arg(m_position).arg(token);
    if (std::abs(m_spec.get(views::nexttoken::kTemperature) - 1.0) > 1e-9)
        m_title += tr(" at temperature %1").arg(formatNumber(m_spec.get(views::nexttoken::kTemperature), 2));
    if (topP < 1.0)
        m_title += tr("; top-p %1 keeps %2 %3 (%4 of the probability), renormalised")
                       .arg(formatNumber(topP, 2))
                       .arg(kept)
                       .arg(kept == 1 ? tr("token") : tr("tokens"))
                       .arg(formatPercent(keptMass));
}

void NextTokenView::drawChart()
{
    QVector<double> keys, values, cutKeys, cutValues;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    m_plot->clearItems();
    const QColor text = themeColors(m_spec.theme).text;
    double largest = 0.0;
    for (size_t i = 0; i < m_bars.size(); ++i) {
        const Bar &b = m_bars[i];
        (b.cut ? cutKeys : keys) << double(i);
        (b.cut ? cutValues : values) << b.probability;
        ticker->addTick(double(i), b.label);
        largest = std::max(largest, b.probability);

        auto *value = new QCPItemText(m_plot);
        value->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        value->position->setCoords(b.probability, double(i)); // (x = probability, y = bar)
        value->setPadding(QMargins(5, 0, 0, 0));
        value->setText(b.cut ? tr("cut (%1 before)").arg(formatPercent(b.probability)) : formatPercent(b.probability));
        value->setFont(sizedFont(font(), 10));
        value->setColor(b.cut ? themeColors(m_spec.theme).muted : text);
        value->setClipToAxisRect(false);
    }
    m_barsPlottable->setData(keys, values, true);
    m_cutBarsPlottable->setData(cutKeys, cutValues, true);
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRange(-0.6, m_bars.size() - 0.4);
    m_plot->xAxis->setRange(0.0, std::max(largest, 1e-6) * 1.2);
    m_titleElement->setText(m_title);
    m_plot->replot();
}

void NextTokenView::syncControls(int tokens)
{
    const QSignalBlocker positionBlocker(m_positionBox), temperatureBlocker(m_temperatureSlider),
        topPBlocker(m_topPBox);
    m_topPBox->setValue(m_spec.get(views::nexttoken::kTopP));
    m_positionBox->setRange(-1, tokens - 1);
    m_positionBox->setValue(m_spec.position);
    m_temperatureSlider->setValue(sliderOf(m_spec.get(views::nexttoken::kTemperature)));
    m_temperatureLabel->setText(
        QStringLiteral("T = %1").arg(formatNumber(m_spec.get(views::nexttoken::kTemperature), 2)));
}

void NextTokenView::applyTheme()
{
    applyPlotTheme(m_plot, m_spec.theme);
    const ThemeColors colors = themeColors(m_spec.theme);
    m_titleElement->setTextColor(colors.text);
    m_titleElement->setFont(sizedFont(font(), 12, true));
    const QColor bar = colors.accent;
    m_barsPlottable->setPen(Qt::NoPen);
    m_barsPlottable->setBrush(bar);
    m_cutBarsPlottable->setPen(Qt::NoPen);
    m_cutBarsPlottable->setBrush(colors.muted);
    QPalette pal = m_message->palette();
    pal.setColor(QPalette::Window, colors.background);
    pal.setColor(QPalette::WindowText, colors.muted);
    m_message->setPalette(pal);
    m_message->setAutoFillBackground(true);
}

void NextTokenView::showToolTip(QMouseEvent *event)
{
    const int i = int(std::lround(m_plot->yAxis->pixelToCoord(event->position().y())));
    if (i < 0 || i >= int(m_bars.size()) || !m_plot->axisRect()->rect().contains(event->position().toPoint())) {
        QToolTip::hideText();
        return;
    }
    const Bar &b = m_bars[size_t(i)];
    QToolTip::showText(event->globalPosition().toPoint(),
        b.cut ? tr("%1\ncut by top-p: never sampled (p = %2 before the cut, rank %3)")
                    .arg(b.label, QString::number(b.probability, 'g', 9))
                    .arg(i + 1)
              : tr("%1\np = %2 (rank %3)").arg(b.label, QString::number(b.probability, 'g', 9)).arg(i + 1),
        m_plot);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::nexttoken::makeView(QWidget *parent)
{
    return std::make_unique<NextTokenView>(parent);
}
