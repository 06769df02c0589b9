#pragma once

#include "util/error.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <string>

namespace atlas {

// The whole of `text` as an integer in [minimum, maximum]; anything else ("1.5", "2e9", "", a value outside) throws
// atlas::Error "<where>: '1.5' is not an integer" or "<where>: 9 is out of range (allowed: 1 to 8)".
inline int boundedInteger(const std::string &text, const std::string &where, int minimum, int maximum)
{
    long long out = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (text.empty() || (ec != std::errc() && ec != std::errc::result_out_of_range) || ptr != text.data() + text.size())
        throw Error(where + ": '" + text + "' is not an integer");
    if (ec == std::errc::result_out_of_range || out < minimum || out > maximum)
        throw Error(where + ": " + text + " is out of range (allowed: " + std::to_string(minimum) + " to "
            + std::to_string(maximum) + ")");
    return int(out);
}

// The whole of `text` as a finite number in [minimum, maximum]: "nan", "inf" and values outside throw as
// boundedInteger does, before any conversion to an integer type could overflow.
inline double boundedNumber(const std::string &text, const std::string &where, double minimum, double maximum)
{
    double d = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(d))
        throw Error(where + ": '" + text + "' is not a number");
    if (d < minimum || d > maximum) {
        std::ostringstream range;
        range << minimum << " to " << maximum;
        throw Error(where + ": " + text + " is out of range (allowed: " + range.str() + ")");
    }
    return d;
}

} // namespace atlas
