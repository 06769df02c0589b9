#pragma once

#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace atlas {

// "--name value" / "--name=value" / "--flag" options of one subcommand. Unknown options are errors.
class Arguments
{
public:
    // The options the command table (commandtable.h) lists for subcommand `command`: those with a value and the
    // flags; throws atlas::Error for anything else.
    Arguments(const std::vector<std::string> &args, const std::string &command);

    bool has(const std::string &name) const { return m_values.count(name) != 0; }
    bool flag(const std::string &name) const { return m_flags.count(name) != 0; }
    std::string value(const std::string &name, const std::string &fallback = {}) const;
    std::string required(const std::string &name) const;
    std::vector<std::string> values(const std::string &name) const; // every occurrence, in order
    // An integer in [minimum, maximum]; anything else (\"1.5\", \"2e9\", \"\", a value outside) is refused naming the
    // option and the range.
    int intValue(const std::string &name, int fallback, int minimum = std::numeric_limits<int>::min(),
        int maximum = std::numeric_limits<int>::max()) const;
    // A finite number in [minimum, maximum]: "nan", "inf" and values outside are refused naming the option, before
    // any conversion to an integer type could overflow.
    double doubleValue(const std::string &name, double fallback, double minimum = -std::numeric_limits<double>::max(),
        double maximum = std::numeric_limits<double>::max()) const;
    // "--size 1200x800": width and height in pixels, each within limits::kMinImageSide..kMaxImageSide.
    std::pair<int, int> imageSize(const std::string &name, const std::string &fallback) const;

private:
    Arguments(
        const std::vector<std::string> &args, const std::set<std::string> &options, const std::set<std::string> &flags);

    std::multimap<std::string, std::string> m_values;
    std::set<std::string> m_flags;
};

} // namespace atlas
