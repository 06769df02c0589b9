#include "io/jsonread.h"

#include "io/limits.h"
#include "util/error.h"

#include <cmath>
#include <vector>

namespace atlas {

using Json = nlohmann::json;

std::string jsonReason(const std::exception &e)
{
    std::string message = e.what();
    if (const size_t end = message.find("] "); message.starts_with("[json.") && end != std::string::npos)
        message.erase(0, end + 2);
    return message;
}

namespace {

Json parseFiltered(const char *begin, const char *end, const std::string &source, const JsonFilter &filter)
{
    // The key being read when the parser gave up: a number that overflows a double fails in the parser, before
    // any field is read, and the user still wants to know which field it was.
    std::string lastKey;
    const auto where = [&] { return lastKey.empty() ? std::string() : " (at key '" + lastKey + "')"; };
    const Json::parser_callback_t callback = [&](int depth, Json::parse_event_t event, Json &parsed) {
        if (event == Json::parse_event_t::key)
            lastKey = parsed.get<std::string>();
        // depth counts the containers around this one; the library parses iteratively, so refusing here is safe
        if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start)
            && depth >= limits::kJsonDepth)
            throw Error(source + ": not valid JSON: objects and arrays nested deeper than "
                + std::to_string(limits::kJsonDepth) + " levels" + where());
        return filter ? filter(depth, event, parsed) : true;
    };
    try {
        return Json::parse(begin, end, callback);
    } catch (const Json::exception &e) {
        throw Error(source + ": not valid JSON: " + jsonReason(e) + where());
    }
}

} // namespace

Json parseJson(const char *begin, const char *end, const std::string &source, const JsonEventHook &onEvent)
{
    if (!onEvent)
        return parseFiltered(begin, end, source, {});
    return parseFiltered(begin, end, source, [&](int depth, Json::parse_event_t event, Json &parsed) {
        onEvent(depth, event, parsed);
        return true;
    });
}

Json parseJson(const std::string &text, const std::string &source, const JsonEventHook &onEvent)
{
    return parseJson(text.data(), text.data() + text.size(), source, onEvent);
}

Json parseJsonFiltered(const std::string &text, const std::string &source, const JsonFilter &filter)
{
    return parseFiltered(text.data(), text.data() + text.size(), source, filter);
}

std::string shownJson(const Json &value)
{
    const auto count
        = [&](const char *what) { return std::to_string(value.size()) + " " + what + (value.size() == 1 ? "" : "s"); };
    if (value.is_array())
        return value.empty() ? "[]" : "an array of " + count("value");
    if (value.is_object())
        return value.empty() ? "{}" : "an object of " + count("key");
    std::string s = value.dump(-1, ' ', false, Json::error_handler_t::replace);
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

namespace {

const Json &member(const Json &object, const std::string &key, const std::string &source)
{
    if (!object.is_object())
        throw Error(source + ": expected a JSON object");
    const auto it = object.find(key);
    if (it == object.end())
        throw Error(source + ": key '" + key + "' is missing");
    return *it;
}

} // namespace

int64_t jsonInteger(
    const Json &object, const std::string &key, int64_t minimum, int64_t maximum, const std::string &source)
{
    const Json &value = member(object, key, source);
    const std::string range = " (allowed: " + std::to_string(minimum) + " to " + std::to_string(maximum) + ")";
    if (!value.is_number_integer())
        throw Error(source + ": key '" + key + "' must be an integer, is " + shownJson(value) + range);
    if (value.is_number_unsigned()) {
        const uint64_t v = value.get<uint64_t>();
        if (maximum < 0 || v > uint64_t(maximum) || (minimum > 0 && v < uint64_t(minimum)))
            throw Error(source + ": key '" + key + "' is out of range: " + shownJson(value) + range);
        return int64_t(v);
    }
    const int64_t v = value.get<int64_t>();
    if (v < minimum || v > maximum)
        throw Error(source + ": key '" + key + "' is out of range: " + shownJson(value) + range);
    return v;
}

double jsonNumber(const Json &object, const std::string &key, double minimum, double maximum, const std::string &source)
{
    const Json &value = member(object, key, source);
    if (!value.is_number())
        throw Error(source + ": key '" + key + "' must be a number, is " + shownJson(value));
    const double v = value.get<double>();
    if (!std::isfinite(v) || v < minimum || v > maximum)
        throw Error(source + ": key '" + key + "' is out of range: " + shownJson(value)
            + " (allowed: " + Json(minimum).dump() + " to " + Json(maximum).dump() + ")");
    return v;
}

std::string jsonString(const Json &object, const std::string &key, const std::string &source)
{
    const Json &value = member(object, key, source);
    if (!value.is_string())
        throw Error(source + ": key '" + key + "' must be a string, is " + shownJson(value));
    return value.get<std::string>();
}

} // namespace atlas
