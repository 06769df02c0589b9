#include "tracedtensor/tensorview.h"
#include "views/heatmapticks.h"

#include "views/viewfonts.h"

#include "views/colormaps.h"
#include "views/plottheme.h"

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTextDocument>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace atlas {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

bool endsWith(const std::string &s, const std::string &suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isAttentionMatrix(const std::string &name)
{
    return endsWith(name, ".scores") || endsWith(name, ".masked") || endsWith(name, ".probs");
}

struct Stats
{
    double min = 0, max = 0, mean = 0, minPositive = 0;
    int64_t finite = 0, negInf = 0, other = 0; // other: NaN and +inf
};

Stats statsOf(const float *data, int64_t n)
{
    Stats s;
    s.min = std::numeric_limits<double>::infinity();
    s.max = -s.min;
    s.minPositive = s.min;
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
        const float v = data[i];
        if (std::isfinite(v)) {
            ++s.finite;
            sum += v;
            s.min = std::min<double>(s.min, v);
            s.max = std::max<double>(s.max, v);
            if (v > 0)
                s.minPositive = std::min<double>(s.minPositive, v);
        } else if (v == -std::numeric_limits<float>::infinity()) {
            ++s.negInf;
        } else {
            ++s.other;
        }
    }
    if (s.finite == 0)
        s.min = s.max = s.minPositive = 0;
    s.mean = s.finite ? sum / double(s.finite) : 0;
    return s;
}

} // namespace

TensorView::TensorView(QWidget *parent)
    : View(parent)
    , m_header(new QLabel(this))
    , m_sliceRow(new QWidget(this))
    , m_sliceBox(new QSpinBox(m_sliceRow))
    , m_sliceCount(new QLabel(m_sliceRow))
    , m_stack(new QStackedWidget(this))
    , m_message(new QLabel(m_stack))
    , m_heatPlot(new QCustomPlot(m_stack))
    , m_barPlot(new QCustomPlot(m_stack))
{
    auto *layout = new QVBoxLayout(this);
    m_header->setTextFormat(Qt::RichText);
    m_header->setWordWrap(true);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_header);

    auto *row = new QHBoxLayout(m_sliceRow);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("head"), m_sliceRow));
    row->addWidget(m_sliceBox);
    row->addWidget(m_sliceCount);
    row->addStretch();
    layout->addWidget(m_sliceRow);
    connect(m_sliceBox, &QSpinBox::valueChanged, this, &TensorView::onSliceChanged);

    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_stack->addWidget(m_message);
    m_stack->addWidget(m_heatPlot);
    m_stack->addWidget(m_barPlot);
    layout->addWidget(m_stack, 1);

    m_colorMap = new QCPColorMap(m_heatPlot->xAxis, m_heatPlot->yAxis);
    m_colorMap->setInterpolate(false);
    m_colorScale = new QCPColorScale(m_heatPlot);
    m_heatPlot->plotLayout()->addElement(0, 1, m_colorScale);
    m_colorMap->setColorScale(m_colorScale);
    auto *margins = new QCPMarginGroup(m_heatPlot);
    m_heatPlot->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_colorScale->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    m_heatPlot->yAxis->setRangeReversed(true); // row 0 (the first query) on top
    m_heatPlot->setMouseTracking(true);
    m_heatPlot->installEventFilter(this); // token labels thin out or fill in with the plot's height
    connect(m_heatPlot, &QCustomPlot::mouseMove, this, &TensorView::showCellToolTip);

    m_bars = new QCPBars(m_barPlot->xAxis, m_barPlot->yAxis);
    m_bars->setWidth(0.8);
    m_bars->setPen(Qt::NoPen);
    refresh();
}

bool TensorView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_heatPlot && event->type() == QEvent::Resize && m_rows > 0)
        labelAxes(m_rows, m_cols);
    return View::eventFilter(watched, event);
}

const Tensor *TensorView::tensor() const
{
    const TraceEntry *e = m_input.trace ? m_input.trace->find(m_spec.tensor) : nullptr;
    return e ? &e->tensor : nullptr;
}

QString TensorView::message() const
{
    return m_stack->currentWidget() == m_message ? m_message->text() : QString();
}

QString TensorView::headerText() const
{
    QTextDocument doc;
    doc.setHtml(m_header->text());
    return doc.toPlainText();
}

int TensorView::slice() const
{
    return m_sliceRow->isHidden() ? 0 : m_sliceBox->value();
}

void TensorView::setSlice(int index)
{
    m_sliceBox->setValue(index);
}

void TensorView::showMessage(const QString &text, bool large)
{
    m_message->setFont(sizedFont(font(), large ? 28 : 12));
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

void TensorView::refresh()
{
    applyTheme();
    m_shapeText.clear();
    m_formulaText.clear();
    m_rows = m_cols = 0;
    const TraceEntry *e = m_input.trace ? m_input.trace->find(m_spec.tensor) : nullptr;
    if (!e) {
        m_header->clear();
        m_sliceRow->hide();
        if (!m_input.trace)
            return showMessage(tr("Nothing to show yet: run the model"));
        if (m_spec.tensor.empty())
            return showMessage(tr("Choose a tensor to show (the view spec's 'tensor' key, e.g. layer.0.attn.q)"));
        return showMessage(notComputedText(m_input, m_spec.tensor));
    }
    const Tensor &t = e->tensor;
    updateHeader(t, e->formula);
    updateSliceBox(t);
    if (t.rank() == 0)
        return showMessage(t.empty() ? tr("(empty)") : formatNumber(t.data()[0], 4), true);
    if (t.empty())
        return showMessage(tr("The tensor has no elements"));
    if (t.rank() == 1)
        return drawVector(t);
    if (t.rank() == 2)
        return drawMatrix(t.data(), int(t.dim(0)), int(t.dim(1)));
    if (t.rank() == 3)
        return drawMatrix(t.slice(slice()).data(), int(t.dim(1)), int(t.dim(2)));
    showMessage(tr("Tensors of rank %1 are not drawn; `atlas dump` writes them as .npy").arg(t.rank()));
}

void TensorView::updateHeader(const Tensor &t, const std::string &formula)
{
    m_shapeText = QString::fromStdString(t.shapeString());
    m_formulaText = QString::fromStdString(formula);
    const Stats s = statsOf(t.data(), t.numel());
    m_min = s.min;
    m_max = s.max;
    m_minPositive = s.minPositive;
    QString html = QStringLiteral("<b>%1</b>&nbsp;&nbsp;<span style='font-family:monospace'>%2</span>")
                       .arg(QString::fromStdString(m_spec.tensor).toHtmlEscaped(), m_shapeText);
    if (!m_formulaText.isEmpty())
        html += QStringLiteral("<br><i>%1</i>").arg(m_formulaText.toHtmlEscaped());
    html += QStringLiteral("<br>min %1 · max %2 · mean %3")
                .arg(formatNumber(s.min, 4), formatNumber(s.max, 4), formatNumber(s.mean, 4));
    if (s.negInf > 0)
        html += tr(" · %1 cells −∞ (masked, drawn in a colour of their own)").arg(s.negInf);
    if (s.other > 0)
        html += tr(" · %1 cells NaN or +∞").arg(s.other);
    m_header->setText(html);
}

void TensorView::updateSliceBox(const Tensor &t)
{
    if (t.rank() != 3 || t.dim(0) == 0) {
        m_sliceRow->hide();
        return;
    }
    const QSignalBlocker block(m_sliceBox);
    m_sliceBox->setRange(0, int(t.dim(0)) - 1);
    m_sliceBox->setValue(std::clamp(m_spec.head, 0, int(t.dim(0)) - 1));
    m_sliceCount->setText(tr("of %1").arg(t.dim(0)));
    m_sliceRow->show();
}

void TensorView::onSliceChanged(int index)
{
    if (index == m_spec.head)
        return;
    m_spec.head = index;
    refresh();
    emit specEdited(m_spec);
}

std::vector<float> TensorView::meanPool(const float *data, int rows, int cols, int outRows, int outCols)
{
    const int fr = (rows + outRows - 1) / outRows;
    const int fc = (cols + outCols - 1) / outCols;
    std::vector<float> out(size_t(outRows) * outCols, kNaN);
    for (int i = 0; i < outRows; ++i) {
        for (int j = 0; j < outCols; ++j) {
            double sum = 0;
            int finite = 0;
            bool negInf = false;
            for (int r = i * fr; r < std::min(rows, (i + 1) * fr); ++r) {
                for (int c = j * fc; c < std::min(cols, (j + 1) * fc); ++c) {
                    const float v = data[size_t(r) * cols + c];
                    if (std::isfinite(v)) {
                        sum += v;
                        ++finite;
                    }
                    negInf = negInf || v == -std::numeric_limits<float>::infinity();
                }
            }
            float &cell = out[size_t(i) * outCols + j];
            cell = finite ? float(sum / finite) : negInf ? -std::numeric_limits<float>::infinity() : kNaN;
        }
    }
    return out;
}

void TensorView::drawMatrix(const float *data, int rows, int cols)
{
    m_rows = rows;
    m_cols = cols;
    auto pooledSize = [](int n) {
        const int block = (n + kMaxCells - 1) / kMaxCells;
        return (n + block - 1) / block;
    };
    const int outRows = pooledSize(rows);
    const int outCols = pooledSize(cols);
    std::vector<float> cells = meanPool(data, rows, cols, outRows, outCols);
    // The colours span the whole tensor, not the slice, so that heads can be compared by eye.
    const bool signedData = m_min < 0;
    const bool log = m_spec.scale == "log" && !signedData && m_max > 0;
    const double lo = log ? std::max(m_minPositive, m_max * 1e-6) : m_min;
    for (float &v : cells) {
        if (v == -std::numeric_limits<float>::infinity() || std::isnan(v))
            v = kNaN; // the gradient's NaN colour marks masked cells
        else if (log)
            v = std::max(v, float(lo)); // log of 0 is undefined; clamp to the colour bar's floor
    }
    m_colorScale->setDataScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    fillColorMap(cells, outRows, outCols, rows, cols);
    setColorRange(float(lo), float(m_max), signedData);
    labelAxes(rows, cols);
    m_stack->setCurrentWidget(m_heatPlot);
    m_heatPlot->replot();
}

void TensorView::fillColorMap(const std::vector<float> &cells, int outRows, int outCols, int rows, int cols)
{
    // QCPColorMap sizes a cell from the distance between the first and last cell centres, which is zero for
    // a single cell: a lone row or column is drawn as two half-width copies instead.
    const int nx = std::max(outCols, 2);
    const int ny = std::max(outRows, 2);
    const double fx = double(cols) / outCols;
    const double fy = double(rows) / outRows;
    auto span = [](int n, double f, int size) {
        return n == 1 ? QCPRange(size / 2.0 - 0.75, size / 2.0 - 0.25) : QCPRange(f / 2 - 0.5, size - f / 2 - 0.5);
    };
    auto *map = new QCPColorMapData(nx, ny, span(outCols, fx, cols), span(outRows, fy, rows));
    for (int y = 0; y < ny; ++y) {
        for (int x = 0; x < nx; ++x)
            map->setCell(x, y, cells[size_t(std::min(y, outRows - 1)) * outCols + std::min(x, outCols - 1)]);
    }
    m_colorMap->setData(map, false);
    m_heatPlot->xAxis->setRange(-0.5, cols - 0.5);
    m_heatPlot->yAxis->setRange(-0.5, rows - 0.5);
}

void TensorView::setColorRange(float lo, float hi, bool signedData)
{
    QCPColorGradient gradient;
    if (signedData) {
        gradient = divergingColormap();
        const float m = std::max({std::abs(lo), std::abs(hi), 1e-12f});
        lo = -m;
        hi = m;
    } else {
        try {
            gradient = colormap(m_spec.colormap);
        } catch (const std::exception &) {
            gradient = colormap("viridis");
        }
        if (hi <= lo)
            hi = lo + std::max(std::abs(lo) * 1e-3f, 1e-6f);
    }
    m_colorScale->setGradient(gradient);
    m_colorScale->setDataRange(QCPRange(lo, hi));
    const bool log = m_colorScale->dataScaleType() == QCPAxis::stLogarithmic;
    m_colorScale->axis()->setLabel(signedData ? tr("value (0 = white)") : log ? tr("value (log scale)") : tr("value"));
}

void TensorView::labelAxes(int rows, int cols)
{
    const std::string &name = m_spec.tensor;
    const bool attention = isAttentionMatrix(name);
    const bool tokenRows = rows == m_input.tokens.size();
    // Token rows (and an attention matrix's key columns) are labelled as the Attention view labels them: each row
    // with its index ("#7 h"), which a lesson's "rows 7 and 9" points at.
    const QStringList tokens = tokenLabels(m_input, int(m_input.tokens.size()));
    const int plotHeight = std::max(100, m_heatPlot->height() - 90),
              plotWidth = std::max(100, m_heatPlot->width() - 160);
    if (tokenRows)
        setTokenTicks(m_heatPlot->yAxis, tokens, rows, plotHeight, false, true);
    else
        setIntegerTicks(m_heatPlot->yAxis);
    m_heatPlot->yAxis->setLabel(tokenRows ? (attention ? tr("query") : tr("token")) : tr("row"));
    const bool tokenCols = attention && cols == m_input.tokens.size();
    if (tokenCols)
        setTokenTicks(m_heatPlot->xAxis, tokens, cols, plotWidth, true, true);
    else {
        setIntegerTicks(m_heatPlot->xAxis);
        m_heatPlot->xAxis->setTickLabelRotation(0);
    }
    const bool vocab = name == "logits" || name == "next_probs";
    m_heatPlot->xAxis->setLabel(attention ? tr("key") : vocab ? tr("vocabulary id") : tr("dimension"));
}

void TensorView::drawVector(const Tensor &t)
{
    const int n = int(t.numel());
    const int out = std::min(n, kMaxCells);
    const std::vector<float> pooled = meanPool(t.data(), 1, n, 1, out);
    const double block = double(n) / out;
    QVector<double> keys, values;
    for (int i = 0; i < out; ++i) {
        keys << (out == n ? i : (i + 0.5) * block - 0.5);
        values << (std::isfinite(pooled[size_t(i)]) ? pooled[size_t(i)] : 0.0);
    }
    m_bars->setWidth(0.8 * block);
    m_bars->setData(keys, values, true);
    m_barPlot->xAxis->setRange(-0.5, n - 0.5);
    m_barPlot->xAxis->setLabel(tr("index"));
    m_barPlot->yAxis->setLabel(tr("value"));
    bool found = false;
    const QCPRange r = m_bars->getValueRange(found);
    m_barPlot->yAxis->setRange(found ? QCPRange(std::min(0.0, r.lower), std::max(0.0, r.upper)) : QCPRange(0, 1));
    m_barPlot->yAxis->scaleRange(1.1);
    m_stack->setCurrentWidget(m_barPlot);
    m_barPlot->replot();
}

void TensorView::applyTheme()
{
    QPalette pal = palette();
    const ThemeColors colors = themeColors(m_spec.theme);
    pal.setColor(QPalette::Window, colors.background);
    pal.setColor(QPalette::WindowText, colors.text);
    pal.setColor(QPalette::Base, colors.field);
    pal.setColor(QPalette::Text, pal.color(QPalette::WindowText));
    pal.setColor(QPalette::Button, colors.control);
    pal.setColor(QPalette::ButtonText, pal.color(QPalette::WindowText));
    setPalette(pal);
    setAutoFillBackground(true);
    applyPlotTheme(m_heatPlot, m_spec.theme);
    applyPlotTheme(m_barPlot, m_spec.theme);
    m_bars->setBrush(colors.accent);
    m_header->setFont(sizedFont(font(), 10));
}

void TensorView::showCellToolTip(QMouseEvent *event)
{
    const Tensor *t = tensor();
    const QPointF pos = event->position();
    const int col = int(std::lround(m_heatPlot->xAxis->pixelToCoord(pos.x())));
    const int row = int(std::lround(m_heatPlot->yAxis->pixelToCoord(pos.y())));
    if (!t || t->rank() < 2 || row < 0 || row >= m_rows || col < 0 || col >= m_cols
        || !m_heatPlot->axisRect()->rect().contains(pos.toPoint())) {
        QToolTip::hideText();
        return;
    }
    const float *data = t->rank() == 3 ? t->slice(slice()).data() : t->data();
    const float v = data[size_t(row) * m_cols + col];
    QString where = tr("row %1").arg(row);
    if (m_rows == m_input.tokens.size())
        where += QStringLiteral(" ('%1')").arg(m_input.tokens.at(row));
    where += tr(", column %1").arg(col);
    if (isAttentionMatrix(m_spec.tensor) && m_cols == m_input.tokens.size())
        where += QStringLiteral(" ('%1')").arg(m_input.tokens.at(col));
    const QString value = v == -std::numeric_limits<float>::infinity() ? tr("−∞ (masked)") : formatNumber(v, 7);
    QToolTip::showText(event->globalPosition().toPoint(), where + QStringLiteral(": ") + value, m_heatPlot);
}

} // namespace atlas

std::unique_ptr<atlas::View> atlas::views::tracedtensor::makeView(QWidget *parent)
{
    return std::make_unique<TensorView>(parent);
}
