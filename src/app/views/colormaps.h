#pragma once

#include <qcustomplot.h>

#include <QColor>
#include <QRgb>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace atlas {

// The colour maps a ViewSpec may name: viridis | magma | cividis | greys (matplotlib's values, sampled at
// 20 stops, within 1.5/255 of matplotlib's 256-entry tables).
std::vector<std::string> colormapNames();

// A QCustomPlot gradient for `name`; throws atlas::Error for an unknown name. NaN cells (how heat maps
// carry −∞) are drawn in maskedColor(name).
QCPColorGradient colormap(const std::string &name);

// Signed values (a difference, a weight): blue below 0, white at 0, red above (ColorBrewer's RdBu, colour-blind
// safe); NaN in dark grey. Draw it over a range symmetric about 0.
QCPColorGradient divergingColormap();

// A colour for −∞ (masked) cells that none of the map's own colours resembles.
QColor maskedColor(const std::string &name);

// Where a value sits on a heat map's colour scale, as t ∈ [0, 1]: linear over [0, upper], or logarithmic from
// logLower (the smallest positive value drawn, but at most six decades below `upper`; anything smaller takes the
// lowest colour). Every heat map's log scale is this one: HeatmapPlot's axis and the QPainter-drawn maps (all
// heads' thumbnails, the kernel comparison, LSH's sorted matrices).
class ColorScale
{
public:
    static constexpr float kLogDecades = 6;
    static float logLower(float upper, float minPositive);

    ColorScale(bool log, float upper, float minPositive);
    float place(float value) const
    {
        return m_log ? std::log(std::max(value, m_lower) / m_lower) / m_logSpan : value / m_upper;
    }

private:
    bool m_log;
    float m_upper, m_lower, m_logSpan;
};

// A 256-entry lookup table for QPainter-drawn thumbnails: map(t) for t in [0, 1] (clamped), NaN -> masked.
class ColorLut
{
public:
    explicit ColorLut(const std::string &name = "viridis");

    QRgb map(float t) const
    {
        if (!(t == t))
            return m_masked;
        const int i = t <= 0.0f ? 0 : t >= 1.0f ? 255 : static_cast<int>(t * 255.0f + 0.5f);
        return m_table[static_cast<size_t>(i)];
    }
    QRgb masked() const { return m_masked; }
    const std::string &name() const { return m_name; }

private:
    std::string m_name;
    std::array<QRgb, 256> m_table {};
    QRgb m_masked = 0;
};

} // namespace atlas
