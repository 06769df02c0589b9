#include "io/jsonread.h"

#include "io/limits.h"
#include "util/error.h"
#include "util/text.h"

#include <cmath>
#include <functional>
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

// Builds the tree from the parser's events as nlohmann's callback parser does (the same events, depths and filter
// semantics), in linear time: that parser, after every object it closes, walks the whole parent to find a dropped
// member, so a header of 100,000 tensor objects took 100 s (issue 66). A dropped value is removed where it was put.
class TreeBuilder
{
public:
    using Event = Json::parse_event_t;
    // `onEvent` sees each event (it may throw); returning false drops the value, as Json::parser_callback_t does
    using Filter = std::function<bool(int depth, Event event, Json &parsed)>;

    explicit TreeBuilder(Filter onEvent)
        : m_onEvent(std::move(onEvent))
    {
    }

    Json take() { return m_root.is_discarded() ? Json(nullptr) : std::move(m_root); }
    const std::string &lastKey() const { return m_lastKey; }
    bool finished() const { return m_finished; } // the top-level value is complete (what follows is extra)

    bool null() { return value(Json(nullptr)); }
    bool boolean(bool v) { return value(Json(v)); }
    bool number_integer(Json::number_integer_t v) { return value(Json(v)); }
    bool number_unsigned(Json::number_unsigned_t v) { return value(Json(v)); }
    bool number_float(Json::number_float_t v, const std::string &) { return value(Json(v)); }
    bool string(std::string &v) { return value(Json(std::move(v))); }
    bool binary(Json::binary_t &v) { return value(Json(std::move(v))); }
    bool start_object(std::size_t) { return start(Event::object_start, Json::object()); }
    bool start_array(std::size_t) { return start(Event::array_start, Json::array()); }
    bool end_object() { return end(Event::object_end); }
    bool end_array() { return end(Event::array_end); }

    bool key(std::string &k)
    {
        m_lastKey = k;
        Json parsed(k);
        Frame &frame = m_stack.back();
        frame.keyKept = call(int(m_stack.size()), Event::key, parsed);
        frame.key = std::move(k);
        return true;
    }

    template <class Exception> bool parse_error(std::size_t, const std::string &, const Exception &e) { throw e; }

private:
    struct Frame
    {
        Json *container; // nullptr when this container is kept out of the tree
        bool kept; // the filter kept it at its start: its values are offered to the filter
        std::string key; // the member being read, when it is an object
        bool keyKept = true;
        std::string keyInParent; // where it sits in its parent object
    };

    bool call(int depth, Event event, Json &parsed) { return !m_onEvent || m_onEvent(depth, event, parsed); }

    // Puts `v` where the next value goes; nullptr when the parent, or its key, was kept out.
    Json *place(Json &&v)
    {
        if (m_stack.empty()) {
            m_root = std::move(v);
            return &m_root;
        }
        Frame &parent = m_stack.back();
        if (!parent.container)
            return nullptr;
        if (parent.container->is_array()) {
            parent.container->push_back(std::move(v));
            return &parent.container->back();
        }
        if (!parent.keyKept)
            return nullptr;
        return &((*parent.container)[parent.key] = std::move(v));
    }

    bool value(Json &&v)
    {
        if (!m_stack.empty() && !m_stack.back().kept)
            return true;
        if (call(int(m_stack.size()), Event::value, v))
            place(std::move(v));
        m_finished = m_stack.empty();
        return true;
    }

    bool start(Event event, Json &&empty)
    {
        Json discarded(Json::value_t::discarded);
        const bool kept = call(int(m_stack.size()), event, discarded);
        Json *container = kept ? place(std::move(empty)) : nullptr;
        std::string keyInParent = m_stack.empty() ? std::string() : m_stack.back().key;
        m_stack.push_back({container, kept, {}, true, std::move(keyInParent)});
        return true;
    }

    bool end(Event event)
    {
        Frame frame = std::move(m_stack.back());
        if (frame.container && !call(int(m_stack.size()) - 1, event, *frame.container)) {
            if (m_stack.size() == 1)
                m_root = Json(Json::value_t::discarded);
            else if (Json *parent = m_stack[m_stack.size() - 2].container; parent->is_array())
                parent->erase(parent->size() - 1);
            else
                parent->erase(frame.keyInParent);
        }
        m_stack.pop_back();
        m_finished = m_stack.empty();
        return true;
    }

    Filter m_onEvent;
    Json m_root;
    std::vector<Frame> m_stack;
    std::string m_lastKey;
    bool m_finished = false;
};

// Where the parser was when it gave up: the key being read (a number that overflows a double fails in the parser,
// before any field is read, and the user still wants to know which field it was), or past the end of the value.
std::string where(const TreeBuilder &builder)
{
    if (builder.finished())
        return " (after the top-level value, which had ended)";
    return builder.lastKey().empty() ? std::string() : " (at key '" + shownText(builder.lastKey()) + "')";
}

// nlohmann's message without its prefix, the text it quotes (a 400-digit number, a string) cut as shownText does.
std::string shortReason(const std::exception &e)
{
    std::string reason = jsonReason(e);
    const size_t open = reason.find('\''), close = reason.rfind('\'');
    if (open != std::string::npos && close > open + 1)
        reason.replace(
            open + 1, close - open - 1, shownText(std::string_view(reason).substr(open + 1, close - open - 1)));
    return reason;
}

Json parseFiltered(const char *begin, const char *end, const std::string &source, const JsonFilter &filter)
{
    const TreeBuilder *self = nullptr;
    TreeBuilder builder([&](int depth, Json::parse_event_t event, Json &parsed) {
        // depth counts the containers around this one; the parse is iterative, so refusing here is safe
        if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start)
            && depth >= limits::kJsonDepth)
            throw Error(source + ": not valid JSON: objects and arrays nested deeper than "
                + std::to_string(limits::kJsonDepth) + " levels" + where(*self));
        return filter ? filter(depth, event, parsed) : true;
    });
    self = &builder;
    try {
        Json::sax_parse(begin, end, &builder);
    } catch (const Json::exception &e) {
        throw Error(source + ": not valid JSON: " + shortReason(e) + where(builder));
    }
    return builder.take();
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

void JsonPlace::fail(const std::string &problem) const
{
    throw Error(key.empty() ? source + ": the file " + problem : source + ": key '" + key + "' " + problem);
}

std::string jsonString(const Json &value, const JsonPlace &place)
{
    if (!value.is_string())
        place.fail("must be a string, is " + shownJson(value));
    return value.get<std::string>();
}

bool jsonBool(const Json &value, const JsonPlace &place)
{
    if (!value.is_boolean())
        place.fail("must be true or false, is " + shownJson(value));
    return value.get<bool>();
}

int64_t jsonInteger(const Json &value, const JsonPlace &place, int64_t minimum, int64_t maximum)
{
    const auto range = [&] { return " (allowed: " + std::to_string(minimum) + " to " + std::to_string(maximum) + ")"; };
    if (!value.is_number_integer())
        place.fail("must be an integer, is " + shownJson(value));
    if (value.is_number_unsigned()) {
        const uint64_t v = value.get<uint64_t>();
        if (maximum < 0 || v > uint64_t(maximum) || (minimum > 0 && v < uint64_t(minimum)))
            place.fail("is out of range: " + shownJson(value) + range());
        return int64_t(v);
    }
    const int64_t v = value.get<int64_t>();
    if (v < minimum || v > maximum)
        place.fail("is out of range: " + shownJson(value) + range());
    return v;
}

double jsonNumber(const Json &value, const JsonPlace &place, double minimum, double maximum)
{
    if (!value.is_number())
        place.fail("must be a number, is " + shownJson(value));
    const double v = value.get<double>();
    if (!std::isfinite(v) || v < minimum || v > maximum)
        place.fail("is out of range: " + shownJson(value) + " (allowed: " + Json(minimum).dump() + " to "
            + Json(maximum).dump() + ")");
    return v;
}

const Json &jsonMember(const Json &object, const std::string &key, const JsonPlace &place)
{
    if (!object.is_object())
        throw Error(place() + ": expected a JSON object");
    const auto it = object.find(key);
    if (it == object.end())
        place.at(key).fail("is missing");
    return *it;
}

const Json *optionalJsonMember(const Json &object, const std::string &key)
{
    if (!object.is_object())
        return nullptr;
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}

int64_t jsonInteger(
    const Json &object, const std::string &key, int64_t minimum, int64_t maximum, const std::string &source)
{
    return jsonInteger(jsonMember(object, key, {source, ""}), JsonPlace {source, key}, minimum, maximum);
}

double jsonNumber(const Json &object, const std::string &key, double minimum, double maximum, const std::string &source)
{
    return jsonNumber(jsonMember(object, key, {source, ""}), JsonPlace {source, key}, minimum, maximum);
}

std::string jsonString(const Json &object, const std::string &key, const std::string &source)
{
    return jsonString(jsonMember(object, key, {source, ""}), JsonPlace {source, key});
}

std::string jsonString(const Json &object, const std::string &key, const JsonPlace &place)
{
    return jsonString(jsonMember(object, key, place), place.at(key));
}

int64_t jsonInteger(const Json &object, const std::string &key, const JsonPlace &place, int64_t minimum,
    int64_t maximum, int64_t fallback)
{
    const Json *value = optionalJsonMember(object, key);
    return value ? jsonInteger(*value, place.at(key), minimum, maximum) : fallback;
}

std::string jsonString(const Json &object, const std::string &key, const JsonPlace &place, const std::string &fallback)
{
    const Json *value = optionalJsonMember(object, key);
    return value ? jsonString(*value, place.at(key)) : fallback;
}

bool jsonBool(const Json &object, const std::string &key, const JsonPlace &place, bool fallback)
{
    const Json *value = optionalJsonMember(object, key);
    return value ? jsonBool(*value, place.at(key)) : fallback;
}

} // namespace atlas
