#include "util/text.h"

#include <cctype>
#include <cmath>

namespace atlas {

std::string sentenceCased(std::string text)
{
    if (!text.empty())
        text[0] = char(std::toupper(static_cast<unsigned char>(text[0])));
    return text;
}

std::string countOf(size_t count, std::string_view singular, std::string_view plural)
{
    std::string text = std::to_string(count) + " ";
    if (count == 1)
        return text.append(singular);
    return plural.empty() ? text.append(singular).append("s") : text.append(plural);
}

std::string shownText(std::string_view text)
{
    constexpr size_t kShown = 60;
    std::string shown;
    size_t characters = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const bool starts = (byte & 0xC0) != 0x80; // not a UTF-8 continuation byte
        if (starts && ++characters > kShown)
            return shown + "…";
        shown += byte < 0x20 || byte == 0x7F ? '?' : text[i];
    }
    return shown;
}

ScaledValue scaledToUnit(double value, double base, int units)
{
    int unit = 0;
    while (std::fabs(value) >= base && unit < units - 1) {
        value /= base;
        ++unit;
    }
    return {value, unit};
}

std::string shownNumbers(const std::vector<int> &numbers, std::string_view separator, size_t most)
{
    std::string out;
    for (size_t i = 0; i < numbers.size() && i < most; ++i) {
        if (i > 0)
            out += separator;
        out += std::to_string(numbers[i]);
    }
    if (numbers.size() > most)
        out.append(separator).append("…");
    return out;
}

} // namespace atlas
