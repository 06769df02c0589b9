#include "io/jsonread.h"
#include "tokenize/gpt2words.h"
#include "tokenize/pipeline.h"
#include "tokenize/regex.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>

namespace atlas::pipeline {

namespace {

using namespace unicode;

// A stretch of a piece: [begin, end) and whether the pattern matched it.
struct Segment
{
    size_t begin, end;
    bool isMatch;
};

// The Rust crate's SplitDelimiterBehavior.
enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

Behavior behaviorOf(const Json &json, const JsonPlace &where, Behavior fallback)
{
    const auto it = json.find("behavior");
    if (it == json.end() || it->is_null())
        return fallback;
    const std::string name = it->is_string() ? it->get<std::string>() : shownJson(*it);
    for (auto [n, b] : {std::pair {"Removed", Behavior::Removed}, {"Isolated", Behavior::Isolated},
             {"MergedWithPrevious", Behavior::MergedWithPrevious}, {"MergedWithNext", Behavior::MergedWithNext},
             {"Contiguous", Behavior::Contiguous}})
        if (name == n)
            return b;
    throw Error(where.at("behavior")() + ": \"" + name.substr(0, 40)
        + "\" is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

// Matches -> segments covering the whole text, as the crate's Pattern::find_matches.
std::vector<Segment> segmentsOf(size_t length, const std::vector<std::pair<size_t, size_t>> &matches, bool invert)
{
    std::vector<Segment> segments;
    size_t prev = 0;
    for (const auto &[begin, end] : matches) {
        if (prev != begin)
            segments.push_back({prev, begin, invert});
        segments.push_back({begin, end, !invert});
        prev = end;
    }
    if (prev != length || length == 0)
        segments.push_back({prev, length, invert});
    return segments;
}

// Each character for which `test` holds is a match of its own (the crate's Pattern for Fn(char) -> bool).
std::vector<Segment> charSegments(std::string_view text, const std::function<bool(uint32_t)> &test)
{
    std::vector<std::pair<size_t, size_t>> matches;
    for (size_t pos = 0; pos < text.size();) {
        const DecodedChar c = decodeUtf8(text, pos);
        if (test(c.codePoint))
            matches.emplace_back(pos, pos + c.length);
        pos += c.length;
    }
    return segmentsOf(text.size(), matches, false);
}

// NormalizedString::split: the behaviour decides what becomes of the matches; empty pieces are dropped.
void splitPiece(const Piece &piece, std::vector<Segment> segments, Behavior behavior, std::vector<Piece> &out)
{
    std::vector<Segment> kept; // isMatch now means "remove"
    bool previousMatch = false;
    switch (behavior) {
    case Behavior::Removed:
        kept = std::move(segments);
        break;
    case Behavior::Isolated:
        for (Segment s : segments)
            kept.push_back({s.begin, s.end, false});
        break;
    case Behavior::Contiguous:
        for (Segment s : segments) {
            if (s.isMatch == previousMatch && !kept.empty())
                kept.back().end = s.end;
            else
                kept.push_back({s.begin, s.end, false});
            previousMatch = s.isMatch;
        }
        break;
    case Behavior::MergedWithPrevious:
        for (Segment s : segments) {
            if (s.isMatch && !previousMatch && !kept.empty())
                kept.back().end = s.end;
            else
                kept.push_back({s.begin, s.end, false});
            previousMatch = s.isMatch;
        }
        break;
    case Behavior::MergedWithNext:
        for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
            if (it->isMatch && !previousMatch && !kept.empty())
                kept.back().begin = it->begin;
            else
                kept.push_back({it->begin, it->end, false});
            previousMatch = it->isMatch;
        }
        std::reverse(kept.begin(), kept.end());
        break;
    }
    for (const Segment &s : kept)
        if (!s.isMatch && s.end > s.begin)
            out.push_back({piece.text.substr(s.begin, s.end - s.begin), piece.atOrigin && s.begin == 0});
}

template <typename F> void eachPiece(std::vector<Piece> &pieces, F split)
{
    std::vector<Piece> out;
    out.reserve(pieces.size());
    for (const Piece &p : pieces)
        split(p, out);
    pieces = std::move(out);
}

bool isBertPunctuation(uint32_t cp)
{
    return (cp < 128 && std::ispunct(static_cast<int>(cp))) || isPunctuation(cp);
}

class ByteLevel : public PreTokenizer
{
public:
    ByteLevel(const Json &json, const JsonPlace &where)
        : m_addPrefixSpace(jsonBool(json, "add_prefix_space", where, true))
        , m_useRegex(jsonBool(json, "use_regex", where, true))
    {
        for (int b = 0; b < 256; ++b)
            m_utf8[b] = byteLevelUtf8(static_cast<unsigned char>(b));
    }
    void preTokenize(std::vector<Piece> &pieces, size_t) const override
    {
        eachPiece(pieces, [&](const Piece &p, std::vector<Piece> &out) {
            const std::string text = m_addPrefixSpace && !p.text.starts_with(' ') ? " " + p.text : p.text;
            if (!m_useRegex) {
                out.push_back({toByteLevel(text), p.atOrigin});
                return;
            }
            for (size_t pos = 0; pos < text.size();) {
                const size_t n = gpt2WordLength(text, pos);
                out.push_back({toByteLevel(std::string_view(text).substr(pos, n)), p.atOrigin && pos == 0});
                pos += n;
            }
        });
    }

private:
    std::string toByteLevel(std::string_view bytes) const
    {
        std::string out;
        out.reserve(bytes.size() * 2);
        for (unsigned char b : bytes)
            out += m_utf8[b];
        return out;
    }

    bool m_addPrefixSpace, m_useRegex;
    std::array<std::string_view, 256> m_utf8;
};

class Split : public PreTokenizer
{
public:
    Split(const Json &json, const JsonPlace &where)
        : m_pattern(json.contains("pattern") ? json["pattern"] : Json(), where.at("pattern"))
        , m_behavior(behaviorOf(json, where, Behavior::Removed))
        , m_invert(jsonBool(json, "invert", where, false))
    {
        if (!json.contains("behavior"))
            throw Error(where.at("behavior")() + ": missing");
    }
    void preTokenize(std::vector<Piece> &pieces, size_t) const override
    {
        eachPiece(pieces, [&](const Piece &p, std::vector<Piece> &out) {
            splitPiece(p, segmentsOf(p.text.size(), m_pattern.findAll(p.text), m_invert), m_behavior, out);
        });
    }

private:
    Pattern m_pattern;
    Behavior m_behavior;
    bool m_invert;
};

class Metaspace : public PreTokenizer
{
public:
    Metaspace(const Json &json, const JsonPlace &where)
        : m_replacement(jsonString(json, "replacement", where, "\xE2\x96\x81"))
        , m_split(jsonBool(json, "split", where, true))
    {
        const DecodedChar c = decodeUtf8(m_replacement, 0);
        if (m_replacement.empty() || size_t(c.length) != m_replacement.size() || c.codePoint == kInvalidCodePoint)
            throw Error(where.at("replacement")() + ": expected one character");
        m_replacementChar = c.codePoint;
        if (optionalJsonMember(json, "prepend_scheme")) {
            const std::string s = jsonString(json, "prepend_scheme", where);
            if (s != "always" && s != "first" && s != "never")
                throw Error(
                    where.at("prepend_scheme")() + ": \"" + s.substr(0, 40) + "\" is not one of always, first, never");
            m_prepend = s;
        } else {
            m_prepend = jsonBool(json, "add_prefix_space", where, true) ? "always" : "never"; // older files
        }
    }
    void preTokenize(std::vector<Piece> &pieces, size_t) const override
    {
        eachPiece(pieces, [&](const Piece &p, std::vector<Piece> &out) {
            std::string text;
            text.reserve(p.text.size() + 8);
            for (char c : p.text)
                if (c == ' ')
                    text += m_replacement;
                else
                    text += c;
            if (!text.starts_with(m_replacement) && (m_prepend == "always" || (m_prepend == "first" && p.atOrigin)))
                text.insert(0, m_replacement);
            const Piece rewritten {std::move(text), p.atOrigin};
            if (!m_split) {
                out.push_back(rewritten);
                return;
            }
            const uint32_t r = m_replacementChar;
            splitPiece(rewritten, charSegments(rewritten.text, [r](uint32_t cp) { return cp == r; }),
                Behavior::MergedWithNext, out);
        });
    }

private:
    std::string m_replacement;
    uint32_t m_replacementChar = 0;
    std::string m_prepend;
    bool m_split;
};

// Splits on characters: each one for which `test` holds is a delimiter handled by `behavior`.
class CharSplit : public PreTokenizer
{
public:
    CharSplit(std::function<bool(uint32_t)> test, Behavior behavior)
        : m_test(std::move(test))
        , m_behavior(behavior)
    {
    }
    void preTokenize(std::vector<Piece> &pieces, size_t) const override
    {
        eachPiece(pieces, [&](const Piece &p, std::vector<Piece> &out) {
            splitPiece(p, charSegments(p.text, m_test), m_behavior, out);
        });
    }

private:
    std::function<bool(uint32_t)> m_test;
    Behavior m_behavior;
};

// The crate's Whitespace: \w+|[^\w\s]+, everything else removed. \w is Oniguruma's word class (Alphabetic, marks,
// decimal digits, connector punctuation, joiners) with the Latin-1 superscripts and fractions it also counts.
class Whitespace : public PreTokenizer
{
public:
    Whitespace()
        : m_regex(R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}\x{B2}\x{B3}\x{B9}\x{BC}-\x{BE}]+)"
                  R"(|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}\x{B2}\x{B3}\x{B9}\x{BC}-\x{BE}\s]+)")
    {
    }
    void preTokenize(std::vector<Piece> &pieces, size_t) const override
    {
        eachPiece(pieces, [&](const Piece &p, std::vector<Piece> &out) {
            splitPiece(p, segmentsOf(p.text.size(), m_regex.findAll(p.text), true), Behavior::Removed, out);
        });
    }

private:
    Regex m_regex;
};

class PreTokenizerSequence : public PreTokenizer
{
public:
    PreTokenizerSequence(const Json &json, const JsonPlace &where)
        : m_steps(readSteps(json, "pretokenizers", where, &makePreTokenizer))
    {
    }
    explicit PreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> steps)
        : m_steps(std::move(steps))
    {
    }
    void preTokenize(std::vector<Piece> &pieces, size_t limit) const override
    {
        for (const auto &step : m_steps)
            step->preTokenize(pieces, limit);
    }

private:
    std::vector<std::unique_ptr<PreTokenizer>> m_steps;
};

// A component with its output's size checked (pipeline.h: rewrittenLimit).
class BoundedPreTokenizer : public PreTokenizer
{
public:
    BoundedPreTokenizer(std::unique_ptr<PreTokenizer> inner, JsonPlace where, std::string type)
        : m_inner(std::move(inner))
        , m_where(std::move(where))
        , m_type(std::move(type))
    {
    }
    void preTokenize(std::vector<Piece> &pieces, size_t limit) const override
    {
        m_inner->preTokenize(pieces, limit);
        size_t bytes = 0;
        for (const Piece &p : pieces)
            bytes += p.text.size();
        if (bytes > limit)
            refuseGrowth(m_where, m_type, "pre-tokenizer", limit);
    }

private:
    std::unique_ptr<PreTokenizer> m_inner;
    JsonPlace m_where;
    std::string m_type;
};

std::unique_ptr<PreTokenizer> whitespaceSplit(const Json &, const JsonPlace &)
{
    return std::make_unique<CharSplit>(isWhiteSpace, Behavior::Removed);
}

// White space removed, then each punctuation character on its own.
std::unique_ptr<PreTokenizer> bertPreTokenizer(const Json &, const JsonPlace &)
{
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    steps.push_back(std::make_unique<CharSplit>(isWhiteSpace, Behavior::Removed));
    steps.push_back(std::make_unique<CharSplit>(isBertPunctuation, Behavior::Isolated));
    return std::make_unique<PreTokenizerSequence>(std::move(steps));
}

std::unique_ptr<PreTokenizer> punctuation(const Json &json, const JsonPlace &where)
{
    return std::make_unique<CharSplit>(isBertPunctuation, behaviorOf(json, where, Behavior::Isolated));
}

std::unique_ptr<PreTokenizer> digits(const Json &json, const JsonPlace &where)
{
    const bool individual = jsonBool(json, "individual_digits", where, false);
    return std::make_unique<CharSplit>(isNumeric, individual ? Behavior::Isolated : Behavior::Contiguous);
}

std::unique_ptr<PreTokenizer> charDelimiterSplit(const Json &json, const JsonPlace &where)
{
    const std::string delimiter = jsonString(json, "delimiter", where);
    const DecodedChar c = delimiter.empty() ? DecodedChar {kInvalidCodePoint, 0} : decodeUtf8(delimiter, 0);
    if (c.codePoint == kInvalidCodePoint || size_t(c.length) != delimiter.size())
        throw Error(where.at("delimiter")() + ": expected one character");
    return std::make_unique<CharSplit>([d = c.codePoint](uint32_t cp) { return cp == d; }, Behavior::Removed);
}

constexpr ComponentType<PreTokenizer> kPreTokenizers[] = {{"ByteLevel", madeFromJson<PreTokenizer, ByteLevel>},
    {"Split", madeFromJson<PreTokenizer, Split>}, {"Metaspace", madeFromJson<PreTokenizer, Metaspace>},
    {"Whitespace", madeBare<PreTokenizer, Whitespace>}, {"WhitespaceSplit", whitespaceSplit},
    {"BertPreTokenizer", bertPreTokenizer}, {"Punctuation", punctuation}, {"Digits", digits},
    {"CharDelimiterSplit", charDelimiterSplit}, {"Sequence", madeFromJson<PreTokenizer, PreTokenizerSequence>}};

std::unique_ptr<PreTokenizer> makeUncheckedPreTokenizer(
    const std::string &type, const Json &json, const JsonPlace &where)
{
    return makeComponent(type, kPreTokenizers, "pre-tokenizer", json, where);
}

} // namespace

std::unique_ptr<PreTokenizer> makePreTokenizer(const Json &json, const JsonPlace &where)
{
    if (json.is_null())
        return nullptr;
    const std::string type = typeOf(json, where);
    return std::make_unique<BoundedPreTokenizer>(makeUncheckedPreTokenizer(type, json, where), where, type);
}

} // namespace atlas::pipeline
