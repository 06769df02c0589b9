#include "view/viewspec.h"

#include "view/comparison.h"

#include "attention/attentionkernel.h"
#include "engine/headablation.h"
#include "io/jsonread.h"
#include "io/limits.h"
#include "util/commalist.h"
#include "util/error.h"
#include "view/viewkinds.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <utility>
#include <variant>

namespace atlas {
namespace {

using Json = nlohmann::json;

size_t editDistance(const std::string &a, const std::string &b)
{
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// "did you mean 'layer'?" when a candidate is close enough to be a plausible typo, else the full list.
std::string suggestion(const std::string &word, const std::vector<std::string> &candidates)
{
    const std::string *best = nullptr;
    size_t bestDistance = SIZE_MAX;
    for (const std::string &c : candidates) {
        const size_t d = editDistance(word, c);
        if (d < bestDistance) {
            bestDistance = d;
            best = &c;
        }
    }
    const size_t tolerance = std::max<size_t>(2, std::max(word.size(), best->size()) / 2);
    if (bestDistance <= tolerance)
        return "did you mean '" + *best + "'?";
    return "expected one of: " + joinedCommaList(candidates);
}

const char *typeName(const Json &value)
{
    if (value.is_number_integer())
        return "an integer";
    if (value.is_number())
        return "a number";
    if (value.is_string())
        return "a string";
    if (value.is_boolean())
        return "a boolean";
    if (value.is_null())
        return "null";
    if (value.is_array())
        return "an array";
    return "an object";
}

// Reads one member of the spec object; every failure names the source and the key. The types are io/jsonread.h's
// readers'; the rules of a spec's values (an index at least −1, a positive rate) are this file's.
class Reader
{
public:
    Reader(std::string source, std::string key)
        : m_place {std::move(source), std::move(key)}
    {
    }

    [[noreturn]] void fail(const std::string &reason) const
    {
        throw Error(m_place.source + ": key '" + m_place.key + "': " + reason);
    }

    std::string string(const Json &value) const { return jsonString(value, m_place); }

    std::string oneOf(const Json &value, const std::vector<std::string> &allowed) const
    {
        std::string s = string(value);
        if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
            fail("unknown value '" + s + "' (" + suggestion(s, allowed) + ")");
        return s;
    }

    int integer(const Json &value, int minimum, const std::string &rule) const
    {
        const int v = int(jsonInteger(value, m_place, INT_MIN, INT_MAX));
        if (v < minimum)
            fail("must be " + rule + ", got " + std::to_string(v));
        return v;
    }

    bool boolean(const Json &value) const { return jsonBool(value, m_place); }

    // Above 0 (or 0 itself, when zeroAllowed) and at most `maximum`.
    double number(const Json &value, double maximum, bool zeroAllowed) const
    {
        const double v = jsonNumber(value, m_place, std::numeric_limits<double>::lowest(), DBL_MAX);
        if (v < 0 || (v == 0 && !zeroAllowed) || v > maximum)
            fail(std::string(zeroAllowed ? "must be at least 0" : "must be above 0") + " and at most "
                + Json(maximum).dump() + ", got " + shownJson(value));
        return v == 0 ? 0.0 : v; // −0 read as 0
    }

    std::vector<std::string> strings(const Json &value) const
    {
        if (!value.is_array())
            m_place.fail("must be an array of strings, is " + shownJson(value));
        std::vector<std::string> out;
        for (size_t i = 0; i < value.size(); ++i)
            out.push_back(jsonString(value[i], m_place.at(i)));
        return out;
    }

    // The kernel and its parameters must make a valid spec; the message names this key.
    void checkKernel(const std::string &kind, const std::vector<std::string> &params) const
    {
        try {
            attention::parseAttentionKernelSpec(kind, params);
        } catch (const Error &e) {
            fail(e.what());
        }
    }

    std::vector<int> integers(const Json &value) const
    {
        if (!value.is_array())
            m_place.fail("must be an array of integers, is " + shownJson(value));
        std::vector<int> out;
        for (size_t i = 0; i < value.size(); ++i) {
            const Json &e = value[i];
            if (!e.is_number_integer() || (!e.is_number_unsigned() && e.get<int64_t>() < 0)
                || (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT_MAX)))
                m_place.at(i).fail("must be a non-negative integer, is " + shownJson(e));
            out.push_back(e.get<int>());
        }
        return out;
    }

private:
    JsonPlace m_place;
};

void readKey(const SpecKey &key, ViewSpec &spec, const Reader &r, const Json &v)
{
    std::visit(
        [&](const auto &f) {
            using T = decltype(fieldValue(spec, f));
            if constexpr (std::is_same_v<T, std::string>)
                setField(spec, f, key.choices.empty() ? r.string(v) : r.oneOf(v, key.choices));
            else if constexpr (std::is_same_v<T, int>)
                setField(spec, f, r.integer(v, key.minimum, key.rule));
            else if constexpr (std::is_same_v<T, double>)
                setField(spec, f, r.number(v, key.maximum, key.zeroAllowed));
            else if constexpr (std::is_same_v<T, bool>)
                setField(spec, f, r.boolean(v));
            else if constexpr (std::is_same_v<T, std::vector<int>>)
                setField(spec, f, r.integers(v));
            else
                setField(spec, f, r.strings(v));
        },
        key.field);
    if (key.check)
        if (const std::string why = key.check(spec); !why.empty())
            r.fail(why);
}

std::vector<std::string> keyNames()
{
    std::vector<std::string> names;
    for (const SpecKey &key : specKeys())
        names.push_back(key.name);
    return names;
}

} // namespace

std::vector<std::string> ViewSpec::viewKinds()
{
    std::vector<std::string> kinds;
    for (const ViewKind &k : atlas::viewKinds())
        kinds.push_back(k.kind);
    return kinds;
}

const SpecKey *findSpecKey(const std::string &name)
{
    for (const SpecKey &key : specKeys())
        if (key.name == name)
            return &key;
    return nullptr;
}

bool viewReadsKey(const std::string &view, const SpecKey &key)
{
    return key.views.empty() || std::find(key.views.begin(), key.views.end(), view) != key.views.end();
}

std::vector<std::string> unreadKeys(const ViewSpec &spec)
{
    static const ViewSpec defaults;
    std::vector<std::string> unread;
    for (const SpecKey &key : specKeys())
        if (!viewReadsKey(spec.view, key)
            && std::visit([&](const auto &f) { return !(fieldValue(spec, f) == fieldValue(defaults, f)); }, key.field))
            unread.push_back(key.name);
    return unread;
}

std::string specKeysMarkdown()
{
    const ViewSpec defaults;
    std::string out = "| key | type | default | read by | meaning |\n| --- | --- | --- | --- | --- |\n";
    for (const SpecKey &key : specKeys()) {
        const std::string value
            = std::visit([&](const auto &f) { return Json(fieldValue(defaults, f)).dump(); }, key.field);
        std::string readers;
        for (const std::string &view : key.views)
            readers += (readers.empty() ? "`" : ", `") + view + "`";
        out += "| `" + key.name + "` | " + key.type + " | `" + value + "` | "
            + (readers.empty() ? "every view" : readers) + " | " + key.meaning + " |\n";
    }
    return out;
}

ViewSpec ViewSpec::fromJson(const std::string &json, const std::string &source)
{
    if (json.size() > limits::kViewSpecBytes)
        throw Error(source + ": a view spec is at most " + std::to_string(limits::kViewSpecBytes)
            + " bytes, this one has " + std::to_string(json.size()));
    const Json root = parseJson(json, source); // a number too large for a double names its key, too
    if (!root.is_object())
        throw Error(source + ": expected a JSON object with view-spec keys, got " + typeName(root));

    ViewSpec spec;
    for (const auto &[key, value] : root.items()) {
        const Reader reader(source, key);
        const SpecKey *specKey = findSpecKey(key);
        if (specKey == nullptr)
            reader.fail("unknown key (" + suggestion(key, keyNames()) + ")");
        readKey(*specKey, spec, reader, value);
    }
    Reader(source, "attention_params").checkKernel(spec.attention, spec.attentionParams);
    if (!spec.compareAttention.empty())
        Reader(source, "compare_attention_params").checkKernel(spec.compareAttention, spec.compareAttentionParams);
    if (const SpecProblem problem = comparisonProblem(spec); !problem.why.empty())
        Reader(source, problem.key).fail(problem.why);
    return spec;
}

std::string ViewSpec::toJson(bool changedOnly) const
{
    if (changedOnly) {
        const nlohmann::ordered_json all = nlohmann::ordered_json::parse(toJson()),
                                     defaults = nlohmann::ordered_json::parse(ViewSpec().toJson());
        nlohmann::ordered_json j;
        const std::vector<std::string> unread = unreadKeys(*this);
        for (const auto &[key, value] : all.items())
            if (key == "view" || key == "model"
                || (value != defaults[key] && std::find(unread.begin(), unread.end(), key) == unread.end()))
                j[key] = value;
        return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    }
    nlohmann::ordered_json j;
    for (const SpecKey &key : specKeys())
        std::visit([&](const auto &f) { j[key.name] = fieldValue(*this, f); }, key.field);
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace atlas
