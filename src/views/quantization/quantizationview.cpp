#include "quantization/quantizationview.h"

#include "views/palette.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>
#include <cmath>
#include <map>

namespace atlas {

namespace {

using namespace views::quantization;

const QColor &kFloat = palette::tableauBlue, &kReadBack = palette::tableauOrange;

QString percent(double fraction)
{
    return QStringLiteral("%1 %").arg(formatNumber(100.0 * fraction, 3));
}

// A sub-block's level multipliers where they are few enough to draw as lines; none otherwise.
std::vector<float> drawnLevels(const GgmlBlockScales &s)
{
    std::vector<float> m = s.scales.empty() || s.subBlock <= 0 ? std::vector<float>() : s.levelMultipliers();
    return m.size() <= 40 ? m : std::vector<float>();
}

} // namespace

QuantizationView::QuantizationView(QWidget *parent)
    : ResultPlotView(parent)
    , m_type(new QComboBox(controlRow()))
    , m_matrix(new QComboBox(controlRow()))
    , m_block(new QSpinBox(controlRow()))
{
    auto *row = static_cast<QHBoxLayout *>(controlRow()->layout());
    row->addWidget(new QLabel(tr("Quantize to"), controlRow()));
    for (const auto &[name, text] : {std::pair {"f16", "F16 (16 bits)"}, {"q8_0", "Q8_0 (8.5 bits)"},
             {"q4_0", "Q4_0 (4.5 bits)"}, {"q4_k", "Q4_K (4.5 bits)"}})
        m_type->addItem(tr(text), QString::fromLatin1(name));
    m_type->setToolTip(tr("The type this model's matrices are quantized to here, as save --type writes them (spec "
                          "key quant_type). A GGUF file shows the types it holds."));
    row->addWidget(m_type);
    row->addSpacing(12);
    row->addWidget(new QLabel(tr("Matrix"), controlRow()));
    m_matrix->setToolTip(tr("The matrix whose block and histogram are shown (spec key quant_matrix); a click on its "
                            "bar chooses it too"));
    row->addWidget(m_matrix);
    row->addSpacing(12);
    row->addWidget(new QLabel(tr("Block"), controlRow()));
    m_block->setToolTip(tr("The block shown: blocks of 32 weights (256 for K-quants) along each row, row after row "
                           "(spec key quant_block)"));
    m_block->setRange(0, 0);
    row->addWidget(m_block);
    row->addStretch(1);
    connect(m_type, &QComboBox::activated, this, [this] {
        m_spec.set(kType, m_type->currentData().toString().toStdString());
        emit specEdited(m_spec);
    });
    connect(m_matrix, &QComboBox::activated, this, [this] {
        m_spec.set(kMatrix, m_matrix->currentData().toString().toStdString());
        emit specEdited(m_spec);
    });
    connect(m_block, &QSpinBox::valueChanged, this, [this](int value) {
        if (value == m_spec.get(kBlock))
            return;
        m_spec.set(kBlock, value);
        emit specEdited(m_spec);
    });
    connect(plot(), &QCustomPlot::mousePress, this, &QuantizationView::chooseMatrixAt);
}

QString QuantizationView::pendingText() const
{
    return tr("Quantizing the layer's matrices and comparing them with the float weights\u2026");
}

void QuantizationView::syncControls(const QuantizationEffect &e)
{
    const QSignalBlocker blockType(m_type), blockMatrix(m_matrix), blockBlock(m_block);
    m_type->setCurrentIndex(std::max(0, m_type->findData(QString::fromStdString(m_spec.get(kType)))));
    m_type->setEnabled(!e.fromFile);
    m_matrix->clear();
    for (const QuantizedMatrix &m : e.matrices)
        m_matrix->addItem(QString::fromStdString(m.role), QString::fromStdString(m.name));
    m_matrix->setCurrentIndex(e.chosen);
    m_block->setRange(0, int(std::min<int64_t>(e.blocks - 1, 1 << 30)));
    m_block->setValue(int(e.block));
}

QString QuantizationView::draw(const QuantizationAnalysis &result)
{
    const QuantizationEffect &e = result.effect;
    if (e.matrices.empty())
        return tr("Layer %1 has no matrix to show.").arg(e.layer);
    syncControls(e);
    const QString model = m_input.model ? QString::fromStdString(m_input.model->name) : QString();
    const QString layer = e.stack.empty() ? tr("layer %1").arg(e.layer)
                                          : tr("%1 layer %2").arg(QString::fromStdString(e.stack)).arg(e.layer);
    setTitle(tr("Quantization \u00B7 %1 \u00B7 %2").arg(model, layer));
    drawMatrices(e);
    drawBlock(e);
    drawHistogram(e);

    const QuantizedMatrix &m = e.matrices[size_t(e.chosen)];
    QString text
        = tr("%1: %2, %3 bits per weight (%4).")
              .arg(QString::fromStdString(m.role), QString::fromStdString(m.type), formatNumber(m.bitsPerWeight, 3),
                  e.fromFile ? tr("as the GGUF file holds it") : tr("quantized here, as save writes it"));
    if (!e.scales.formula.empty()) {
        text += tr(" Block %1 of %2 (row %3, from column %4): %5")
                    .arg(e.block)
                    .arg(e.blocks)
                    .arg(e.row)
                    .arg(e.column)
                    .arg(QString::fromStdString(e.scales.formula));
        if (e.scales.scales.size() == 1)
            text += tr(", d = %1").arg(formatNumber(e.scales.scales.front(), 4))
                + (e.scales.mins.empty() ? QString() : tr(", m = %1").arg(formatNumber(e.scales.mins.front(), 4)));
        if (!drawnLevels(e.scales).empty())
            text += tr(" (dashed lines: the levels)");
        text += tr(".");
    }
    if (!e.referenceProblem.empty()) {
        text += tr(" No float weights to compare with: %1.").arg(QString::fromStdString(e.referenceProblem));
    } else if (e.reference.empty()) {
        text += tr(" No float weights to compare with: name a model of the same shapes in quant_reference.");
    } else {
        double worst = 0;
        for (size_t i = 0; i < e.values.size() && i < e.referenceValues.size(); ++i)
            worst = std::max(worst, double(std::fabs(e.values[i] - e.referenceValues[i])));
        const bool uniform = e.scales.scales.size() == 1 && e.scales.highest >= e.scales.lowest;
        text += tr(" Against %1: the block's weights move by up to %2%3, the matrix by %4 of its size, its output "
                   "on this input by %5.")
                    .arg(QString::fromStdString(e.reference), formatNumber(worst, 3),
                        uniform ? tr(" (half a step: %1)").arg(formatNumber(std::fabs(e.scales.scales.front()) / 2, 3))
                                : QString(),
                        percent(m.weightError),
                        m.outputError >= 0 ? percent(m.outputError) : tr("(not measured: its input is not traced)"));
    }
    return text;
}

void QuantizationView::drawMatrices(const QuantizationEffect &e)
{
    m_matrices = addAxisRect(0, 0);
    QCPAxis *x = m_matrices->axis(QCPAxis::atBottom), *y = m_matrices->axis(QCPAxis::atLeft);
    const bool errors = !e.reference.empty();
    const ThemeColors colors = themeColors(m_spec.theme);
    auto ticks = QSharedPointer<QCPAxisTickerText>::create();
    auto *bars = new QCPBars(x, y), *chosen = new QCPBars(x, y);
    auto *outputs = new QCPGraph(x, y);
    double top = 1e-9;
    m_roles.clear();
    // the types over the bars that are not of the commonest one (the title names it), so that labels do not crowd
    std::map<std::string, int> typeCounts;
    for (const QuantizedMatrix &m : e.matrices)
        ++typeCounts[m.type];
    const std::string common = std::max_element(typeCounts.begin(), typeCounts.end(), [](auto &a, auto &b) {
        return a.second < b.second;
    })->first;
    const bool mixed = typeCounts.size() > 1;
    const bool many = e.matrices.size() > 8; // an encoder–decoder's decoder block: ticks without their "W_"
    for (size_t i = 0; i < e.matrices.size(); ++i) {
        const QuantizedMatrix &m = e.matrices[i];
        const double value = errors ? 100.0 * m.weightError : m.bitsPerWeight;
        (int(i) == e.chosen ? chosen : bars)->addData(double(i), value);
        if (errors && m.outputError >= 0)
            outputs->addData(double(i), 100.0 * m.outputError);
        top = std::max({top, value, errors ? 100.0 * m.outputError : 0.0});
        ticks->addTick(
            double(i), QString::fromStdString(many ? m.role.substr(2) : m.role).replace(" cross", "\ncross"));
        m_roles.push_back(m.name);
        if (m.type == common)
            continue;
        auto *type = new QCPItemText(plot()); // the type over its bar
        type->setClipAxisRect(m_matrices);
        type->position->setAxes(x, y);
        type->position->setCoords(double(i), value);
        type->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        type->setText(QString::fromStdString(m.type));
        type->setColor(colors.text);
        type->setFont(x->tickLabelFont());
    }
    for (auto [b, colour] : {std::pair {bars, colors.accent}, std::pair {chosen, palette::alert}}) {
        b->setWidth(0.6);
        b->setPen(Qt::NoPen);
        b->setBrush(colour);
    }
    bars->setName(errors ? tr("weights") : tr("bits per weight"));
    chosen->removeFromLegend();
    std::vector<QCPAbstractPlottable *> entries {bars};
    if (errors && !outputs->data()->isEmpty()) {
        outputs->setLineStyle(QCPGraph::lsNone);
        outputs->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(colors.text, 1.5), kReadBack, 11));
        outputs->setName(tr("output"));
        entries.push_back(outputs);
    } else {
        outputs->removeFromLegend();
    }
    x->setTicker(ticks);
    x->setRange(-0.6, double(e.matrices.size()) - 0.4);
    x->grid()->setVisible(false);
    x->setLabel(tr("matrix (click one)"));
    y->setRange(0, top * (mixed ? 1.3 : 1.1));
    y->setLabel(errors ? tr("relative error, %") : tr("bits per weight"));
    const QString all = mixed ? tr(" (%1 unless marked)").arg(QString::fromStdString(common))
                              : tr(" (all %1)").arg(QString::fromStdString(common));
    setPanelTitle(m_matrices, (errors ? tr("Error by matrix") : tr("Bits by matrix")) + all);
    addPanelLegend(m_matrices, entries);
}

void QuantizationView::drawBlock(const QuantizationEffect &e)
{
    QCPAxisRect *rect = addAxisRect(0, 1);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const ThemeColors colors = themeColors(m_spec.theme);
    const int n = int(e.values.size());
    double low = 0, high = 0;
    for (const std::vector<float> *v : {&e.values, &e.referenceValues})
        for (float w : *v) {
            low = std::min(low, double(w));
            high = std::max(high, double(w));
        }
    // The levels a sub-block can read back: scale · q − min (or scale · v of a non-uniform type's table), drawn where
    // they are few enough to tell apart.
    const GgmlBlockScales &s = e.scales;
    const std::vector<float> multipliers = drawnLevels(s);
    if (!multipliers.empty())
        y->grid()->setVisible(false); // the levels take the grid's place: lines in the read-back colour, not grey
    QColor levelColour = kReadBack;
    levelColour.setAlpha(110);
    if (!multipliers.empty())
        for (size_t j = 0; j < s.scales.size() && int64_t(j) * s.subBlock < n; ++j) {
            const double from = double(j) * double(s.subBlock) - 0.5,
                         to = std::min(double(n), double(j + 1) * double(s.subBlock)) - 0.5;
            const double min = s.mins.empty() ? 0.0 : s.mins[j];
            for (const float q : multipliers) {
                const double level = double(s.scales[j]) * q - min;
                if (level < low - 0.05 * (high - low) || level > high + 0.05 * (high - low))
                    continue;
                auto *line = new QCPItemLine(plot());
                line->setClipAxisRect(rect);
                line->setClipToAxisRect(true);
                line->start->setAxes(x, y);
                line->end->setAxes(x, y);
                line->start->setCoords(from, level);
                line->end->setCoords(to, level);
                line->setPen(QPen(levelColour, 1, Qt::DashLine));
            }
        }
    std::vector<QCPAbstractPlottable *> entries;
    const auto points = [&](const std::vector<float> &values, QCPScatterStyle::ScatterShape shape, const QColor &colour,
                            bool filled, const QString &name) {
        if (values.empty())
            return;
        auto *g = new QCPGraph(x, y);
        for (int i = 0; i < int(values.size()); ++i)
            g->addData(i, values[size_t(i)]);
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(shape, QPen(colour, 1.8), filled ? QBrush(colour) : QBrush(Qt::NoBrush), 8));
        g->setName(name);
        entries.push_back(g);
    };
    points(e.referenceValues, QCPScatterStyle::ssCircle, kFloat, false, tr("float"));
    points(e.values, QCPScatterStyle::ssSquare, kReadBack, true, tr("read back"));
    addReferenceLine(rect, Qt::Horizontal, 0, QPen(colors.axis, 1));
    x->setRange(-0.8, n - 0.2);
    setIntegerTicks(x, std::max(1, n / 8));
    x->setLabel(tr("place in the block"));
    const double pad = std::max(1e-6, 0.08 * (high - low));
    y->setRange(low - pad, high + pad);
    y->setLabel(tr("weight"));
    x->grid()->setZeroLinePen(Qt::NoPen);
    setPanelTitle(rect, tr("%1, block %2").arg(QString::fromStdString(e.matrices[size_t(e.chosen)].role)).arg(e.block));
    addPanelLegend(rect, entries);
}

void QuantizationView::drawHistogram(const QuantizationEffect &e)
{
    QCPAxisRect *rect = addAxisRect(0, 2);
    QCPAxis *x = rect->axis(QCPAxis::atBottom), *y = rect->axis(QCPAxis::atLeft);
    const double width = (e.high - e.low) / double(std::max<size_t>(1, e.counts.size()));
    double top = 1;
    const auto steps = [&](const std::vector<double> &counts, const QColor &colour, const QString &name) {
        if (counts.empty())
            return;
        auto *g = new QCPGraph(x, y);
        for (size_t i = 0; i < counts.size(); ++i)
            g->addData(e.low + double(i) * width, counts[i]);
        g->addData(e.high, counts.back());
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setPen(QPen(colour, 2));
        g->setName(name);
        top = std::max(top, *std::max_element(counts.begin(), counts.end()));
    };
    steps(e.referenceCounts, kFloat, tr("float weights"));
    steps(e.counts, kReadBack, tr("read back"));
    x->setRange(e.low, e.high);
    x->ticker()->setTickCount(4);
    x->setLabel(tr("weight"));
    y->setRange(0, top * 1.1);
    y->ticker()->setTickCount(4);
    y->setLabel(tr("count"));
    setPanelTitle(rect, tr("All of %1").arg(QString::fromStdString(e.matrices[size_t(e.chosen)].role)));
}

void QuantizationView::chooseMatrixAt(QMouseEvent *event)
{
    if (!m_matrices || m_roles.empty() || !m_matrices->rect().contains(event->pos()))
        return;
    const int i = int(std::lround(m_matrices->axis(QCPAxis::atBottom)->pixelToCoord(event->pos().x())));
    if (i < 0 || i >= int(m_roles.size()) || m_roles[size_t(i)] == m_spec.get(kMatrix))
        return;
    m_spec.set(kMatrix, m_roles[size_t(i)]);
    emit specEdited(m_spec);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::quantization::makeView(QWidget *parent)
{
    return std::make_unique<QuantizationView>(parent);
}
