#include "views/heatmapcolouring.h"

#include "views/colormapcells.h"
#include "views/colormaps.h"
#include "views/plottheme.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace atlas {

QCPRange colourRange(const Pooled &pooled, const CellColouring &how)
{
    if (how.mask)
        return {-1.0, 1.0};
    if (how.diverging) {
        const double reach = std::max({std::abs(double(pooled.minFinite)), std::abs(double(pooled.maxFinite)), 1e-6});
        return {-reach, reach};
    }
    if (how.log) {
        const float upper = pooled.maxFinite > 0.0f ? pooled.maxFinite : 1.0f;
        return {ColorScale::logLower(upper, pooled.minPositive), upper};
    }
    double lower = pooled.minFinite;
    double upper = pooled.maxFinite;
    if (!(upper > lower)) {
        lower -= 0.5;
        upper += 0.5;
    }
    return {lower, upper};
}

void writeCells(
    ColorMapCells &cells, const Pooled &p, const CellWindow &window, const QCPRange &range, const CellColouring &how)
{
    if (cells.keySize() != p.cols || cells.valueSize() != p.rows)
        cells.setSize(p.cols, p.rows);
    const double keyLo = p.col0 + (p.cols > 1 ? (p.blockCols - 1) / 2.0 : -0.5);
    const double keyHi
        = p.col0 + (p.cols > 1 ? (p.cols - 1) * p.blockCols + (p.blockCols - 1) / 2.0 : window.cols - 0.5);
    const double valLo = p.row0 + (p.rows > 1 ? (p.blockRows - 1) / 2.0 : -0.5);
    const double valHi
        = p.row0 + (p.rows > 1 ? (p.rows - 1) * p.blockRows + (p.blockRows - 1) / 2.0 : window.rows - 0.5);
    cells.setRange(QCPRange(keyLo, keyHi), QCPRange(valLo, valHi));

    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const auto floor = static_cast<float>(range.lower);
    const auto nan = std::numeric_limits<double>::quiet_NaN();
    for (int r = 0; r < p.rows; ++r) { // one loop per mode, without a branch per cell
        const float *in = p.values.data() + static_cast<size_t>(r) * p.cols;
        double *out = cells.row(r);
        if (how.mask) // "allowed": the upper half of the mask gradient
            for (int c = 0; c < p.cols; ++c)
                out[c] = in[c] == kNegInf ? nan : 0.5;
        else if (how.log)
            for (int c = 0; c < p.cols; ++c)
                out[c] = in[c] == kNegInf ? nan : double(std::max(in[c], floor));
        else
            for (int c = 0; c < p.cols; ++c)
                out[c] = in[c] == kNegInf ? nan : double(in[c]);
    }
    cells.markWritten(range);
}

QCPColorGradient cellGradient(const std::string &colormapName, const CellColouring &how, const std::string &theme)
{
    QCPColorGradient gradient = how.diverging ? divergingColormap() : colormap(colormapName);
    if (how.diverging) // masked cells in the grey of viridis maps (the diverging map has no grey): hatched, as there
        gradient.setNanColor(maskedColor("viridis"));
    if (how.mask) {
        const ThemeColors pal = themeColors(theme);
        gradient.setColorStops(
            {{0.0, pal.maskedFill}, {0.499, pal.maskedFill}, {0.5, pal.allowed}, {1.0, pal.allowed}});
        gradient.setNanColor(pal.maskedFill);
    }
    return gradient;
}

void setColourBarAxis(
    QCPColorScale &scale, const CellColouring &how, const QString &maskedLabel, const QString &allowedLabel)
{
    const bool logAxis = how.log && !how.mask;
    scale.setDataScaleType(logAxis ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    QSharedPointer<QCPAxisTicker> ticker(logAxis ? new QCPAxisTickerLog : new QCPAxisTicker);
    if (how.mask) {
        auto *text = new QCPAxisTickerText;
        text->setTicks(QVector<double> {-0.5, 0.5}, QVector<QString> {maskedLabel, allowedLabel});
        ticker.reset(text);
    }
    scale.axis()->setTicker(ticker);
    scale.axis()->setNumberFormat(logAxis ? QStringLiteral("eb") : QStringLiteral("gb"));
    scale.axis()->setNumberPrecision(logAxis ? 0 : 6); // "10⁻³" rather than "1.000000·10⁻³"
}

} // namespace atlas
