#include "experts/expertsview.h"

#include "model/model.h"

#include "experts/experts.h"
#include "views/palette.h"
#include "views/plottheme.h"
#include "views/plottitle.h"
#include "views/viewfonts.h"

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace atlas {

namespace {

QColor expertColour(int e)
{
    return seriesColours().at(e % seriesColours().size());
}

// A dropped token, on light and dark backgrounds alike: pale red, its text black.
QColor droppedFill()
{
    return palette::alertFill;
}

QString factorText(double factor)
{
    return QString::number(factor, 'g', 4);
}

// A text label at plot coordinates, clipped to its axis rect.
QCPItemText *addText(QCustomPlot *plot, double x, double y, const QString &text, const QFont &font,
    const QColor &colour, Qt::Alignment alignment = Qt::AlignCenter)
{
    auto *label = new QCPItemText(plot);
    label->position->setCoords(x, y);
    label->setPositionAlignment(alignment);
    label->setText(text);
    label->setFont(font);
    label->setColor(colour);
    return label;
}

QCPItemRect *addRect(QCustomPlot *plot, double left, double top, double right, double bottom, const QBrush &brush,
    const QPen &pen = Qt::NoPen)
{
    auto *rect = new QCPItemRect(plot);
    rect->topLeft->setCoords(left, top);
    rect->bottomRight->setCoords(right, bottom);
    rect->setBrush(brush);
    rect->setPen(pen);
    return rect;
}

// Tick labels at integer positions, thinned to every n-th so that they fit `pixels`.
QSharedPointer<QCPAxisTickerText> textTicks(const QStringList &labels, int pixels, int pixelsPerLabel)
{
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int every = std::max(1, int(std::ceil(double(labels.size()) * pixelsPerLabel / std::max(pixels, 1))));
    for (int i = 0; i < labels.size(); i += every)
        ticker->addTick(i, labels[i]);
    return ticker;
}

} // namespace

ExpertsView::ExpertsView(QWidget *parent)
    : View(parent)
{
    m_formula = newFormulaLabel();
    m_message = newMessageLabel();

    m_controls = new QWidget(this);
    auto *row = new QHBoxLayout(m_controls);
    row->setContentsMargins(0, 0, 0, 0);
    m_capacity = new QSlider(Qt::Horizontal, m_controls);
    m_capacity->setRange(1, kFactorSteps);
    m_capacity->setPageStep(1);
    m_capacity->setTickPosition(QSlider::TicksBelow);
    m_capacity->setMinimumWidth(200);
    m_factorLabel = new QLabel(m_controls);
    m_topK = new QSpinBox(m_controls);
    m_topK->setRange(0, 1);
    m_topK->setSpecialValueText(tr("own"));
    m_topK->setToolTip(tr("Top-k: how many experts each token goes to (\"own\": the model's own, as trained); second "
                          "choices queue after every first choice and are drawn paler"));
    m_deviceCount = new QSpinBox(m_controls);
    m_deviceCount->setRange(1, 1);
    m_deviceCount->setToolTip(tr("Expert parallelism: the experts spread over this many devices in contiguous "
                                 "blocks, the sequence split evenly among them"));
    row->addWidget(new QLabel(tr("Capacity factor:"), m_controls));
    row->addWidget(m_capacity, 1);
    row->addWidget(m_factorLabel);
    row->addSpacing(24);
    row->addWidget(new QLabel(tr("Top-k:"), m_controls));
    row->addWidget(m_topK);
    row->addSpacing(24);
    row->addWidget(new QLabel(tr("Devices:"), m_controls));
    row->addWidget(m_deviceCount);
    row->addStretch(1);
    connect(m_capacity, &QSlider::valueChanged, this, &ExpertsView::chooseFactor);
    connect(m_deviceCount, &QSpinBox::valueChanged, this, &ExpertsView::chooseDevices);
    connect(m_topK, &QSpinBox::valueChanged, this, &ExpertsView::chooseTopK);

    m_plots = new QWidget(this);
    m_router = new QCustomPlot(m_plots);
    m_buffers = new QCustomPlot(m_plots);
    m_load = new QCustomPlot(m_plots);
    m_devices = new QCustomPlot(m_plots);
    // Tall enough to read at 150 % on a projector: in a small window the view scrolls.
    m_router->setMinimumSize(300, 230);
    for (QCustomPlot *plot : {m_buffers, m_load, m_devices})
        plot->setMinimumSize(200, 250);
    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_buffers, 3);
    bottom->addWidget(m_load, 2);
    bottom->addWidget(m_devices, 2);
    auto *column = new QVBoxLayout(m_plots);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(m_router, 1);
    column->addLayout(bottom, 1);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_formula);
    layout->addWidget(m_controls);
    layout->addWidget(m_message, 1);
    layout->addWidget(m_plots, 1);
    const auto titled = [](QCustomPlot *plot) {
        plot->plotLayout()->insertRow(0);
        auto *title = new PlotTitle(plot, QString(), sizedFont(plot->font(), 11, true));
        plot->plotLayout()->addElement(0, 0, title);
        return title;
    };
    m_routerTitle = titled(m_router);
    m_buffersTitle = titled(m_buffers);
    m_loadTitle = titled(m_load);
    m_devicesTitle = titled(m_devices);
    showMessage(QString::fromUtf8(kNothingComputed));
}

QString ExpertsView::message() const
{
    return m_plots->isHidden() ? m_message->text() : QString();
}

QString ExpertsView::formula() const
{
    return m_formula->text();
}

void ExpertsView::showMessage(const QString &text)
{
    m_message->setFont(sizedFont(font(), 12));
    m_message->setText(text);
    m_message->show();
    m_plots->hide();
}

void ExpertsView::showControls()
{
    const QSignalBlocker blockSlider(m_capacity), blockBox(m_deviceCount), blockTopK(m_topK);
    m_capacity->setValue(std::clamp(int(std::lround(shownFactor() / kFactorStep)), 1, kFactorSteps));
    const ExpertRouting *r = m_drawn ? &m_drawn->routing : nullptr;
    m_deviceCount->setRange(1, r ? std::max(1, r->experts) : 1);
    m_deviceCount->setValue(r ? r->devices : m_spec.get(views::experts::kDevices));
    m_topK->setRange(0, r ? r->experts : 1);
    m_topK->setValue(m_spec.get(views::experts::kExpertTopK));
    const bool dropless = r && r->dropless;
    m_capacity->setEnabled(!dropless);
    m_capacity->setToolTip(dropless ? tr("This router has no capacity to set: it never drops a token (Mixtral)")
                                    : tr("Capacity factor: each expert takes at most ⌈factor · T / E⌉ tokens; the rest "
                                         "are dropped and only the residual carries them. %1 to %2; the slider "
                                         "starts at the model's own factor.")
                                          .arg(factorText(kFactorStep), factorText(kFactorSteps * kFactorStep)));
    m_factorLabel->setText(!r ? QString()
            : dropless        ? tr("none: dropless routing")
            : m_spec.get(views::experts::kCapacityFactor) > 0
            ? tr("%1 → capacity %2").arg(factorText(r->capacityFactor)).arg(r->capacity)
            : tr("%1 (the model's own) → capacity %2").arg(factorText(r->capacityFactor)).arg(r->capacity));
}

double ExpertsView::shownFactor() const
{
    if (m_spec.get(views::experts::kCapacityFactor) > 0)
        return m_spec.get(views::experts::kCapacityFactor);
    return m_input.model ? double(m_input.model->config.capacityFactor) : 1.0;
}

void ExpertsView::chooseFactor(int step)
{
    const double own = m_input.model ? double(m_input.model->config.capacityFactor) : 0.0;
    const double factor = std::abs(step * kFactorStep - own) < 1e-9 ? 0.0 : step * kFactorStep;
    if (factor == m_spec.get(views::experts::kCapacityFactor))
        return;
    m_spec.set(views::experts::kCapacityFactor, factor);
    emit specEdited(m_spec);
}

void ExpertsView::chooseTopK(int topK)
{
    if (topK == m_spec.get(views::experts::kExpertTopK))
        return;
    m_spec.set(views::experts::kExpertTopK, topK);
    emit specEdited(m_spec);
}

void ExpertsView::chooseDevices(int devices)
{
    if (devices == m_spec.get(views::experts::kDevices))
        return;
    m_spec.set(views::experts::kDevices, devices);
    emit specEdited(m_spec);
}

void ExpertsView::refresh()
{
    m_formula->setFont(sizedFont(font(), 11));
    const auto *analysis = currentAnalysis<ExpertsAnalysis>();
    if (analysis == nullptr) {
        m_formula->clear();
        showControls();
        return showMessage(!m_input.analysis.problem.isEmpty() ? m_input.analysis.problem
                : m_input.analysis.pending                     ? tr("Routing…")
                                                               : QString::fromUtf8(kNothingComputed));
    }
    m_drawn = std::make_shared<ExpertsAnalysis>(*analysis);
    const ExpertRouting &r = m_drawn->routing;
    showControls();
    const std::string type = m_input.model ? m_input.model->config.modelType : std::string();
    if (r.dropless)
        m_formula->setText(
            tr("%7 layer %1: %2 experts, top-%3 routing with no capacity: every expert may take all %4 tokens, "
               "so none is dropped (Switch's buffers turn the overflow away), and the %3 chosen probabilities are "
               "renormalised to sum to 1%8;  aux loss E·Σ fᵢPᵢ = %5 (1 when balanced), z-loss %6")
                .arg(r.layer)
                .arg(r.experts)
                .arg(r.topK)
                .arg(r.tokens)
                .arg(formatNumber(r.auxLoss), formatNumber(r.zLoss, 3),
                    type == "qwen3_moe"     ? tr("Qwen3-MoE")
                        : type == "gpt_oss" ? tr("gpt-oss")
                                            : tr("Mixtral"),
                    type == "gpt_oss" ? tr(" (gpt-oss's softmax over the chosen logits, the router's bias added: the "
                                           "same numbers)")
                                      : QString()));
    else
        m_formula->setText(
            tr("Switch layer %1: %2 experts, top-%3 routing, capacity ⌈%4 · %5 / %2⌉ = %6 tokens each;  "
               "aux loss E·Σ fᵢPᵢ = %7 (1 when balanced), z-loss %8;  %9 of %5 tokens dropped (the residual carries "
               "them)")
                .arg(r.layer)
                .arg(r.experts)
                .arg(r.topK)
                .arg(factorText(r.capacityFactor))
                .arg(r.tokens)
                .arg(r.capacity)
                .arg(formatNumber(r.auxLoss), formatNumber(r.zLoss, 3))
                .arg(r.droppedTokens));
    m_message->hide();
    m_plots->show();
    layOutHidden(this); // headless: the plots at the size they are drawn at, for the labels' room
    layOutHidden(m_plots);
    drawPlots();
}

void ExpertsView::drawPlots()
{
    const ExpertRouting &r = m_drawn->routing;
    drawRouter(r);
    drawBuffers(r);
    drawLoad(r);
    drawDevices(r);
}

void ExpertsView::resizeEvent(QResizeEvent *event)
{
    View::resizeEvent(event);
    if (m_drawn && !m_plots->isHidden()) // how many labels fit depends on the width
        drawPlots();
}

void ExpertsView::preparePlot(QCustomPlot *plot, QCPTextElement *title, const QString &text)
{
    plot->clearItems();
    plot->clearPlottables();
    applyPlotTheme(plot, m_spec.theme);
    title->setText(text);
    title->setFont(sizedFont(font(), 11, true));
    title->setTextColor(themeColors(m_spec.theme).text);
    for (QCPAxis *axis : {plot->xAxis, plot->yAxis}) {
        axis->setTickLabelFont(sizedFont(font(), 9));
        axis->setLabelFont(sizedFont(font(), 10));
        axis->grid()->setVisible(false);
        axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        axis->setRangeReversed(false);
    }
}

// Rows: the expert each token went to (its chip), then every expert's router probability for every token.
void ExpertsView::drawRouter(const ExpertRouting &r)
{
    preparePlot(m_router, m_routerTitle, tr("Router: pₑ(x) for each token and expert; top row: the expert chosen"));
    const ThemeColors colours = themeColors(m_spec.theme);
    const QStringList labels = tokenLabels(m_input, r.tokens);
    const int width = std::max(1, m_router->width() - 110); // the axis rect is laid out at the replot
    const bool roomy = width / std::max(1, r.tokens) >= 30;
    const QFont small = sizedFont(font(), 8);
    for (int t = 0; t < r.tokens; ++t) {
        const int e = r.choice[size_t(t)][0];
        const QColor fill = e >= 0 ? expertColour(e) : droppedFill();
        addRect(m_router, t - 0.45, -1.45, t + 0.45, -0.6, fill, QPen(colours.frame, 0.5));
        if (e < 0)
            addText(m_router, t, -1.02, QStringLiteral("✕"), sizedFont(font(), 10, true), palette::alert);
        else if (roomy)
            addText(m_router, t, -1.02, QString::number(r.gate[size_t(t)][0], 'f', 2), small, palette::inkOn(fill));
        for (int x = 0; x < r.experts; ++x) {
            const double p = r.probs[size_t(t)][size_t(x)];
            QColor shade = expertColour(x);
            shade.setAlphaF(std::clamp(0.08 + 0.92 * p, 0.0, 1.0));
            const bool chosen
                = std::find(r.choice[size_t(t)].begin(), r.choice[size_t(t)].end(), x) != r.choice[size_t(t)].end();
            const bool turnedAway = !chosen
                && std::find(r.preferred[size_t(t)].begin(), r.preferred[size_t(t)].end(), x)
                    != r.preferred[size_t(t)].end();
            addRect(m_router, t - 0.5, x - 0.5, t + 0.5, x + 0.5, shade,
                chosen           ? QPen(colours.text, 1.5)
                    : turnedAway ? QPen(palette::alert, 1.5, Qt::DashLine)
                                 : Qt::NoPen);
        }
    }
    QStringList expertLabels;
    for (int x = 0; x < r.experts; ++x)
        expertLabels << tr("expert %1").arg(x);
    auto yTicks = QSharedPointer<QCPAxisTickerText>::create();
    yTicks->addTick(-1.02, tr("chosen"));
    for (int x = 0; x < r.experts; ++x)
        yTicks->addTick(x, expertLabels[x]);
    m_router->yAxis->setTicker(yTicks);
    m_router->yAxis->setRangeReversed(true);
    m_router->yAxis->setRange(-1.6, r.experts - 0.5);
    m_router->xAxis->setTicker(textTicks(labels, width, 22));
    m_router->xAxis->setRange(-0.6, r.tokens - 0.4);
    m_router->xAxis->setLabel(tr("token (outlined: the expert that took it; dashed red: full, token dropped)"));
    m_router->replot();
}

// Each expert's buffer, slot by slot in the order tokens arrived, then the tokens it turned away.
void ExpertsView::drawBuffers(const ExpertRouting &r)
{
    preparePlot(m_buffers, m_buffersTitle, tr("Buffers fill in arrival order"));
    const ThemeColors colours = themeColors(m_spec.theme);
    const QStringList labels = tokenLabels(m_input, r.tokens);
    int longest = r.capacity;
    for (int e = 0; e < r.experts; ++e)
        longest = std::max(longest, r.capacity + 1 + int(r.overflow[size_t(e)].size()));
    const int width = std::max(1, m_buffers->width() - 110);
    const bool roomy = double(width) / std::max(1, longest) >= 16;
    const QFont small = sizedFont(font(), 8);
    for (int e = 0; e < r.experts; ++e) {
        const auto &kept = r.buffer[size_t(e)];
        for (size_t s = 0; s < kept.size(); ++s) {
            QColor fill = expertColour(e);
            if (r.bufferRank[size_t(e)][s] > 0) // a second (or later) choice
                fill.setAlphaF(0.5);
            addRect(m_buffers, double(s) + 0.05, e - 0.4, double(s) + 0.95, e + 0.4, fill, QPen(colours.frame, 0.5));
            if (roomy)
                addText(m_buffers, double(s) + 0.5, e, labels.value(kept[s]), small, palette::inkOn(fill));
        }
        for (int s = int(kept.size()); s < r.capacity; ++s) // room left
            addRect(m_buffers, s + 0.05, e - 0.4, s + 0.95, e + 0.4, Qt::NoBrush, QPen(colours.axis, 0.5, Qt::DotLine));
        const auto &dropped = r.overflow[size_t(e)];
        for (size_t s = 0; s < dropped.size(); ++s) {
            const double x = r.capacity + 1.0 + double(s);
            addRect(m_buffers, x + 0.05, e - 0.4, x + 0.95, e + 0.4, droppedFill(), QPen(palette::alert, 1));
            if (roomy)
                addText(m_buffers, x + 0.5, e, labels.value(dropped[s]), small, palette::inkOn(droppedFill()));
        }
    }
    auto *line = new QCPItemStraightLine(m_buffers);
    line->point1->setCoords(r.capacity + 0.5, 0);
    line->point2->setCoords(r.capacity + 0.5, 1);
    line->setPen(QPen(palette::alert, 1.5, Qt::DashLine));
    addText(m_buffers, r.capacity + 0.4, -0.5, tr("capacity %1").arg(r.capacity), sizedFont(font(), 9), palette::alert,
        Qt::AlignRight | Qt::AlignBottom);
    auto yTicks = QSharedPointer<QCPAxisTickerText>::create();
    for (int e = 0; e < r.experts; ++e)
        yTicks->addTick(e, tr("expert %1").arg(e));
    m_buffers->yAxis->setTicker(yTicks);
    m_buffers->yAxis->setRangeReversed(true);
    m_buffers->yAxis->setRange(-0.9, r.experts - 0.5);
    m_buffers->xAxis->setRange(0, longest + 0.2);
    m_buffers->xAxis->setLabel(tr("slot (tokens in arrival order)"));
    setIntegerTicks(m_buffers->xAxis);
    m_buffers->replot();
}

// Tokens per expert, kept and dropped, against the capacity; fᵢ and Pᵢ, the terms of the auxiliary loss.
void ExpertsView::drawLoad(const ExpertRouting &r)
{
    preparePlot(m_load, m_loadTitle, tr("Load: aux loss %1").arg(formatNumber(r.auxLoss)));
    const ThemeColors colours = themeColors(m_spec.theme);
    double top = r.capacity;
    for (int e = 0; e < r.experts; ++e) {
        const double kept = double(r.buffer[size_t(e)].size()), dropped = double(r.overflow[size_t(e)].size());
        auto *keptBars = new QCPBars(m_load->xAxis, m_load->yAxis);
        keptBars->setData({double(e)}, {kept});
        keptBars->setBrush(expertColour(e));
        keptBars->setPen(Qt::NoPen);
        keptBars->setWidth(0.7);
        auto *droppedBars = new QCPBars(m_load->xAxis, m_load->yAxis);
        droppedBars->setData({double(e)}, {dropped});
        droppedBars->setBrush(QBrush(palette::alert, Qt::BDiagPattern));
        droppedBars->setPen(QPen(palette::alert, 1));
        droppedBars->setWidth(0.7);
        droppedBars->moveAbove(keptBars);
        top = std::max(top, kept + dropped);
        addText(m_load, e, kept + dropped,
            tr("f %1\nP %2").arg(formatNumber(r.fraction[size_t(e)], 2), formatNumber(r.meanProb[size_t(e)], 2)),
            sizedFont(font(), 8), colours.text, Qt::AlignHCenter | Qt::AlignBottom);
    }
    auto *line = new QCPItemStraightLine(m_load);
    line->point1->setCoords(0, r.capacity);
    line->point2->setCoords(1, r.capacity);
    line->setPen(QPen(palette::alert, 1.5, Qt::DashLine));
    auto xTicks = QSharedPointer<QCPAxisTickerText>::create();
    for (int e = 0; e < r.experts; ++e)
        xTicks->addTick(e, QString::number(e));
    m_load->xAxis->setTicker(xTicks);
    m_load->xAxis->setLabel(tr("expert (hatched: dropped; dashed: capacity)"));
    m_load->yAxis->setLabel(tr("tokens"));
    m_load->xAxis->setRange(-0.6, r.experts - 0.4);
    m_load->yAxis->setRange(0, top * 1.45 + 1);
    m_load->replot();
}

// Expert parallelism: how many kept choices each device sends to each other one (the all-to-all of the dispatch).
void ExpertsView::drawDevices(const ExpertRouting &r)
{
    preparePlot(m_devices, m_devicesTitle,
        tr("%1 devices: %2 of %3 tokens travel").arg(r.devices).arg(r.crossing).arg(r.dispatched));
    const ThemeColors colours = themeColors(m_spec.theme);
    int most = 1;
    for (const auto &row : r.sent)
        most = std::max(most, *std::max_element(row.begin(), row.end()));
    const QColor hue = seriesColours().at(0);
    for (int a = 0; a < r.devices; ++a)
        for (int b = 0; b < r.devices; ++b) {
            const int n = r.sent[size_t(a)][size_t(b)];
            QColor shade = a == b ? colours.axis : hue;
            shade.setAlphaF(0.1 + 0.8 * double(n) / most);
            addRect(m_devices, b - 0.48, a - 0.48, b + 0.48, a + 0.48, shade, QPen(colours.frame, 0.5));
            addText(m_devices, b, a, QString::number(n), sizedFont(font(), 10, true), colours.text);
        }
    auto xTicks = QSharedPointer<QCPAxisTickerText>::create(), yTicks = QSharedPointer<QCPAxisTickerText>::create();
    for (int d = 0; d < r.devices; ++d) {
        int first = r.experts, last = -1;
        for (int e = 0; e < r.experts; ++e)
            if (r.deviceOfExpert[size_t(e)] == d) {
                first = std::min(first, e);
                last = std::max(last, e);
            }
        xTicks->addTick(d, first == last ? tr("e%1").arg(first) : tr("e%1–%2").arg(first).arg(last));
        const auto begin = std::find(r.deviceOfToken.begin(), r.deviceOfToken.end(), d);
        const auto end = std::find_if(begin, r.deviceOfToken.end(), [d](int x) { return x != d; });
        yTicks->addTick(d,
            begin == end ? tr("none")
                         : tr("t%1–%2").arg(begin - r.deviceOfToken.begin()).arg(end - r.deviceOfToken.begin() - 1));
    }
    m_devices->xAxis->setTicker(xTicks);
    m_devices->yAxis->setTicker(yTicks);
    m_devices->xAxis->setLabel(tr("to the device with experts"));
    m_devices->yAxis->setLabel(tr("from the device with tokens"));
    m_devices->yAxis->setRangeReversed(true);
    m_devices->xAxis->setRange(-0.55, r.devices - 0.45);
    m_devices->yAxis->setRange(-0.55, r.devices - 0.45);
    m_devices->replot();
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::experts::makeView(QWidget *parent)
{
    return std::make_unique<ExpertsView>(parent);
}
