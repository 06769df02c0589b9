#include "arguments.h"

#include "commandtable.h"
#include "io/limits.h"
#include "util/boundednumber.h"
#include "util/error.h"

#include <charconv>
#include <string_view>

namespace atlas {

namespace {

std::pair<std::set<std::string>, std::set<std::string>> optionsAndFlags(const std::string &command)
{
    const CliCommand *entry = findCliCommand(command);
    if (!entry)
        throw Error("no subcommand '" + command + "' in the command table");
    std::pair<std::set<std::string>, std::set<std::string>> out;
    for (const CliOption &o : entry->options)
        (o.value.empty() ? out.second : out.first).insert(o.name);
    return out;
}

} // namespace

Arguments::Arguments(const std::vector<std::string> &args, const std::string &command)
    : Arguments(args, optionsAndFlags(command).first, optionsAndFlags(command).second)
{
}

Arguments::Arguments(
    const std::vector<std::string> &args, const std::set<std::string> &options, const std::set<std::string> &flags)
{
    for (size_t i = 0; i < args.size(); ++i) {
        std::string arg = args[i];
        if (!arg.starts_with("--"))
            throw Error("unexpected argument '" + arg + "' (options start with --)");
        std::string name = arg.substr(2), value;
        const auto eq = name.find('=');
        const bool inlineValue = eq != std::string::npos;
        if (inlineValue) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (flags.count(name) && !inlineValue) {
            m_flags.insert(name);
            continue;
        }
        if (!options.count(name))
            throw Error("unknown option --" + name);
        if (!inlineValue) {
            if (i + 1 >= args.size())
                throw Error("option --" + name + " needs a value");
            value = args[++i];
        }
        m_values.emplace(name, value);
    }
}

std::string Arguments::value(const std::string &name, const std::string &fallback) const
{
    auto range = m_values.equal_range(name);
    return range.first == range.second ? fallback : std::prev(range.second)->second;
}

std::string Arguments::required(const std::string &name) const
{
    if (!has(name))
        throw Error("missing required option --" + name);
    return value(name);
}

std::vector<std::string> Arguments::values(const std::string &name) const
{
    std::vector<std::string> out;
    for (auto [it, end] = m_values.equal_range(name); it != end; ++it)
        out.push_back(it->second);
    return out;
}

int Arguments::intValue(const std::string &name, int fallback, int minimum, int maximum) const
{
    return has(name) ? boundedInteger(value(name), "option --" + name, minimum, maximum) : fallback;
}

double Arguments::doubleValue(const std::string &name, double fallback, double minimum, double maximum) const
{
    return has(name) ? boundedNumber(value(name), "option --" + name, minimum, maximum) : fallback;
}

std::pair<int, int> Arguments::imageSize(const std::string &name, const std::string &fallback) const
{
    const std::string text = value(name, fallback);
    int width = 0, height = 0;
    const size_t x = text.find('x');
    const auto whole = [](std::string_view s, int &out) {
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
        return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
    };
    if (x == std::string::npos || !whole(std::string_view(text).substr(0, x), width)
        || !whole(std::string_view(text).substr(x + 1), height))
        throw Error("option --" + name + ": '" + text + "' is not WIDTHxHEIGHT (e.g. 1200x800)");
    for (const int side : {width, height})
        if (side < limits::kMinImageSide || side > limits::kMaxImageSide)
            throw Error("option --" + name + ": " + text + " is out of range: each side must be "
                + std::to_string(limits::kMinImageSide) + " to " + std::to_string(limits::kMaxImageSide) + " pixels");
    return {width, height};
}

} // namespace atlas
