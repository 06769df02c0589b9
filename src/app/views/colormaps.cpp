#include "views/colormaps.h"

#include "util/error.h"

namespace atlas {

namespace {

// Stops as (index into matplotlib's 256-entry table, 0xRRGGBB). Printed by /usr/bin/python3 with
// matplotlib 3.6: 16 evenly spaced entries plus the entries where linear interpolation strayed most.
struct Stop
{
    int index;
    unsigned rgb;
};

// clang-format off
constexpr Stop kViridis[] = {
    {0, 0x440154},   {17, 0x481a6c},  {34, 0x472f7d},  {51, 0x414487},  {68, 0x39568c},
    {85, 0x31688e},  {102, 0x2a788e}, {119, 0x23888e}, {136, 0x1f988b}, {145, 0x1fa188},
    {153, 0x22a884}, {161, 0x29af7f}, {170, 0x35b779}, {187, 0x54c568}, {204, 0x7ad151},
    {221, 0xa5db36}, {238, 0xd2e21b}, {242, 0xdde318}, {246, 0xe7e419}, {255, 0xfde725},
};

constexpr Stop kMagma[] = {
    {0, 0x000004},   {9, 0x040414},   {17, 0x0b0924},  {34, 0x20114b},  {44, 0x2f1163},
    {51, 0x3b0f70},  {59, 0x491078},  {68, 0x57157e},  {85, 0x721f81},  {102, 0x8c2981},
    {119, 0xa8327d}, {136, 0xc43c75}, {153, 0xde4968}, {170, 0xf1605d}, {178, 0xf66e5c},
    {187, 0xfa7f5e}, {204, 0xfe9f6d}, {221, 0xfebf84}, {238, 0xfddea0}, {255, 0xfcfdbf},
};

constexpr Stop kCividis[] = {
    {0, 0x00224e},   {17, 0x002e6c},  {20, 0x003070},  {23, 0x013271},  {28, 0x123570},
    {34, 0x1e3a6f},  {51, 0x35456c},  {68, 0x47516c},  {85, 0x575d6d},  {102, 0x666970},
    {119, 0x757575}, {136, 0x848279}, {153, 0x948e77}, {170, 0xa59c74}, {187, 0xb7a96e},
    {204, 0xc8b866}, {221, 0xdbc75a}, {238, 0xeed649}, {251, 0xfde334}, {255, 0xfee838},
};

// matplotlib's "Greys": white for the lowest value, black for the highest.
constexpr Stop kGreys[] = {
    {0, 0xffffff},   {17, 0xf7f7f7},  {34, 0xeeeeee},  {51, 0xe2e2e2},  {68, 0xd5d5d5},  {85, 0xc6c6c6},
    {102, 0xb5b5b5}, {119, 0xa0a0a0}, {136, 0x8d8d8d}, {153, 0x7a7a7a}, {170, 0x686868}, {187, 0x565656},
    {204, 0x404040}, {221, 0x282828}, {238, 0x141414}, {255, 0x000000},
};
// clang-format on

template <size_t N> QMap<double, QColor> toStops(const Stop (&stops)[N])
{
    QMap<double, QColor> map;
    for (const Stop &s : stops)
        map.insert(s.index / 255.0, QColor::fromRgb(static_cast<QRgb>(s.rgb)));
    return map;
}

QMap<double, QColor> stopsFor(const std::string &name)
{
    if (name == "viridis")
        return toStops(kViridis);
    if (name == "magma")
        return toStops(kMagma);
    if (name == "cividis")
        return toStops(kCividis);
    if (name == "greys")
        return toStops(kGreys);
    throw Error("colormap: unknown colour map '" + name + "' (expected viridis, magma, cividis or greys)");
}

} // namespace

std::vector<std::string> colormapNames()
{
    return {"viridis", "magma", "cividis", "greys"};
}

QColor maskedColor(const std::string &name)
{
    // viridis and magma hold no neutral grey; cividis passes through grey and greys is nothing but grey, so
    // they get a muted rose. Heat maps also hatch −∞ cells, so the difference never rests on hue alone.
    if (name == "cividis" || name == "greys")
        return QColor(0xd9, 0x8c, 0x8c);
    return QColor(0x9a, 0x9a, 0x9a);
}

QCPColorGradient divergingColormap()
{
    QCPColorGradient g;
    g.setColorStopAt(0.0, QColor(0x2166ac));
    g.setColorStopAt(0.25, QColor(0x67a9cf));
    g.setColorStopAt(0.5, QColor(0xf7f7f7));
    g.setColorStopAt(0.75, QColor(0xef8a62));
    g.setColorStopAt(1.0, QColor(0xb2182b));
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setNanHandling(QCPColorGradient::nhNanColor);
    g.setNanColor(QColor(0x303030));
    return g;
}

QCPColorGradient colormap(const std::string &name)
{
    QCPColorGradient gradient;
    gradient.setColorStops(stopsFor(name));
    gradient.setColorInterpolation(QCPColorGradient::ciRGB);
    gradient.setLevelCount(256);
    gradient.setNanHandling(QCPColorGradient::nhNanColor);
    gradient.setNanColor(maskedColor(name));
    return gradient;
}

float ColorScale::logLower(float upper, float minPositive)
{
    return std::min(std::max(minPositive, upper * std::pow(10.0f, -kLogDecades)), upper * 0.5f);
}

ColorScale::ColorScale(bool log, float upper, float minPositive)
    : m_log(log)
    , m_upper(upper > 0 ? upper : 1.0f)
    , m_lower(logLower(m_upper, minPositive))
    , m_logSpan(std::log(m_upper / m_lower))
{
}

ColorLut::ColorLut(const std::string &name)
    : m_name(name)
{
    QCPColorGradient gradient = colormap(name);
    for (int i = 0; i < 256; ++i)
        m_table[static_cast<size_t>(i)] = gradient.color(i / 255.0, QCPRange(0.0, 1.0));
    m_masked = maskedColor(name).rgb();
}

} // namespace atlas
