#include "io/jsonread.h"
#include "tokenize/pipeline.h"
#include "tokenize/regex.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <array>

namespace atlas::pipeline {

namespace {

using namespace unicode;

template <typename F> std::string mapChars(std::string_view text, F keepOrMap)
{
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const DecodedChar c = decodeUtf8(text, pos);
        keepOrMap(c.codePoint, text.substr(pos, c.length), out);
        pos += c.length;
    }
    return out;
}

class UnicodeForm : public Normalizer
{
public:
    explicit UnicodeForm(NormalForm form)
        : m_form(form)
    {
    }
    void normalize(std::string &text, size_t) const override { text = normalized(text, m_form); }

private:
    NormalForm m_form;
};

class Lowercase : public Normalizer
{
public:
    void normalize(std::string &text, size_t) const override { text = lowercased(text); }
};

// Removes every combining mark (Mn, Mc, Me), as the Rust crate's is_combining_mark; usually after NFD.
class StripAccents : public Normalizer
{
public:
    void normalize(std::string &text, size_t) const override
    {
        text = mapChars(text, [](uint32_t cp, std::string_view raw, std::string &out) {
            if (!isMark(cp))
                out += raw;
        });
    }
};

class StripNormalizer : public Normalizer
{
public:
    StripNormalizer(bool left, bool right)
        : m_left(left)
        , m_right(right)
    {
    }
    void normalize(std::string &text, size_t) const override
    {
        size_t begin = 0, end = text.size();
        if (m_left)
            while (begin < end) {
                const DecodedChar c = decodeUtf8(text, begin);
                if (!isWhiteSpace(c.codePoint))
                    break;
                begin += c.length;
            }
        if (m_right)
            while (end > begin) {
                size_t start = end - 1;
                while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
                    --start;
                if (!isWhiteSpace(decodeUtf8(text, start).codePoint))
                    break;
                end = start;
            }
        text = text.substr(begin, end - begin);
    }

private:
    bool m_left, m_right;
};

class Replace : public Normalizer
{
public:
    Replace(const Json &json, const JsonPlace &where)
        : m_replace(json, where)
    {
    }
    void normalize(std::string &text, size_t limit) const override { text = m_replace(text, limit); }

private:
    Replacement m_replace;
};

class Prepend : public Normalizer
{
public:
    explicit Prepend(std::string prefix)
        : m_prefix(std::move(prefix))
    {
    }
    void normalize(std::string &text, size_t) const override
    {
        if (!text.empty())
            text.insert(0, m_prefix);
    }

private:
    std::string m_prefix;
};

// BERT's: drop NUL, U+FFFD and control characters, make white space ' ', pad CJK ideographs with spaces,
// strip accents (NFD, then drop Mn) and lower-case. strip_accents null follows lowercase.
class BertNormalizer : public Normalizer
{
public:
    BertNormalizer(const Json &json, const JsonPlace &where)
        : m_cleanText(jsonBool(json, "clean_text", where, true))
        , m_chineseChars(jsonBool(json, "handle_chinese_chars", where, true))
        , m_lowercase(jsonBool(json, "lowercase", where, true))
    {
        m_stripAccents = jsonBool(json, "strip_accents", where, m_lowercase);
    }
    void normalize(std::string &text, size_t) const override
    {
        if (m_cleanText)
            text = mapChars(text, [](uint32_t cp, std::string_view raw, std::string &out) {
                if (cp == 0 || cp == 0xFFFD || (cp != '\t' && cp != '\n' && cp != '\r' && isOther(cp)))
                    return;
                if (isWhiteSpace(cp))
                    out += ' ';
                else
                    out += raw;
            });
        if (m_chineseChars)
            text = mapChars(text, [](uint32_t cp, std::string_view raw, std::string &out) {
                const bool cjk = (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF)
                    || (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F)
                    || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF)
                    || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
                if (cjk)
                    out.append(" ").append(raw).append(" ");
                else
                    out += raw;
            });
        if (m_stripAccents)
            text = mapChars(normalized(text, NormalForm::NFD), [](uint32_t cp, std::string_view raw, std::string &out) {
                if (!isNonspacingMark(cp))
                    out += raw;
            });
        if (m_lowercase)
            text = lowercased(text);
    }

private:
    bool m_cleanText, m_chineseChars, m_lowercase, m_stripAccents = false;
};

class NormalizerSequence : public Normalizer
{
public:
    NormalizerSequence(const Json &json, const JsonPlace &where)
        : m_steps(readSteps(json, "normalizers", where, &makeNormalizer))
    {
    }
    void normalize(std::string &text, size_t limit) const override
    {
        for (const auto &step : m_steps)
            step->normalize(text, limit);
    }

private:
    std::vector<std::unique_ptr<Normalizer>> m_steps;
};

// A component with its output's size checked (pipeline.h: rewrittenLimit).
class BoundedNormalizer : public Normalizer
{
public:
    BoundedNormalizer(std::unique_ptr<Normalizer> inner, JsonPlace where, std::string type)
        : m_inner(std::move(inner))
        , m_where(std::move(where))
        , m_type(std::move(type))
    {
    }
    void normalize(std::string &text, size_t limit) const override
    {
        m_inner->normalize(text, limit);
        if (text.size() > limit)
            refuseGrowth(m_where, m_type, "normalizer", limit);
    }

private:
    std::unique_ptr<Normalizer> m_inner;
    JsonPlace m_where;
    std::string m_type;
};

std::unique_ptr<Normalizer> makeUncheckedNormalizer(const std::string &type, const Json &json, const JsonPlace &where);

struct ByteLevelAlphabet
{
    std::array<uint32_t, 256> toChar {};
    std::array<std::string, 256> toUtf8 {};
    std::array<int, 324> toByte {};
    ByteLevelAlphabet()
    {
        toByte.fill(-1);
        uint32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            toChar[b] = printable ? uint32_t(b) : next++;
            toByte[toChar[b]] = b;
            appendUtf8(toUtf8[b], toChar[b]);
        }
    }
};

const ByteLevelAlphabet &byteLevelAlphabet()
{
    static const ByteLevelAlphabet alphabet;
    return alphabet;
}

} // namespace

bool isIntegerUpTo(const Json &value, int64_t maximum)
{
    if (value.is_number_unsigned())
        return value.get<uint64_t>() <= uint64_t(maximum);
    return value.is_number_integer() && value.get<int64_t>() >= 0 && value.get<int64_t>() <= maximum;
}

template <typename Component>
std::vector<std::unique_ptr<Component>> readSteps(const Json &json, const char *key, const JsonPlace &where,
    std::unique_ptr<Component> (*make)(const Json &, const JsonPlace &))
{
    const auto it = json.find(key);
    if (it == json.end() || !it->is_array())
        throw Error(where() + ": a Sequence needs a \"" + key + "\" array");
    std::vector<std::unique_ptr<Component>> steps;
    for (size_t i = 0; i < it->size(); ++i)
        if (auto step = make((*it)[i], where.at(key).at(i)))
            steps.push_back(std::move(step));
    return steps;
}

template std::vector<std::unique_ptr<Normalizer>> readSteps(
    const Json &, const char *, const JsonPlace &, std::unique_ptr<Normalizer> (*)(const Json &, const JsonPlace &));
template std::vector<std::unique_ptr<PreTokenizer>> readSteps(
    const Json &, const char *, const JsonPlace &, std::unique_ptr<PreTokenizer> (*)(const Json &, const JsonPlace &));
template std::vector<std::unique_ptr<PostProcessor>> readSteps(
    const Json &, const char *, const JsonPlace &, std::unique_ptr<PostProcessor> (*)(const Json &, const JsonPlace &));
template std::vector<std::unique_ptr<Decoder>> readSteps(
    const Json &, const char *, const JsonPlace &, std::unique_ptr<Decoder> (*)(const Json &, const JsonPlace &));

std::string typeOf(const Json &json, const JsonPlace &where)
{
    if (!json.is_object())
        throw Error(where() + ": expected an object with a \"type\", got " + shownJson(json));
    const auto it = json.find("type");
    if (it == json.end() || !it->is_string())
        throw Error(where() + ": the component has no \"type\" string");
    return it->get<std::string>();
}

void refuseType(const std::string &type, const char *what, const std::string &supported, const JsonPlace &where)
{
    throw Error(
        where() + ": the " + what + " \"" + type.substr(0, 80) + "\" is not supported (supported: " + supported + ")");
}

Pattern::Pattern(const Json &json, const JsonPlace &where)
    : m_where(where)
{
    if (!json.is_object() || json.size() != 1)
        throw Error(where() + ": expected {\"String\": …} or {\"Regex\": …}, got " + shownJson(json));
    const std::string &kind = json.begin().key(); // not items(): its proxy would die with this line
    const Json &value = json.begin().value();
    if (!value.is_string() || value.get_ref<const std::string &>().empty())
        throw Error(where.at(kind)() + ": expected a non-empty string");
    if (kind == "String")
        m_literal = value.get<std::string>();
    else if (kind == "Regex")
        try {
            m_regex = std::make_unique<Regex>(value.get<std::string>());
        } catch (const Error &e) {
            throw Error(where.at(kind)() + ": " + e.what());
        }
    else
        throw Error(where() + ": \"" + kind.substr(0, 40) + "\" is neither \"String\" nor \"Regex\"");
}

Pattern::~Pattern() = default;

Replacement::Replacement(const Json &json, const JsonPlace &where)
    : m_pattern(json.contains("pattern") ? json["pattern"] : Json(), where.at("pattern"))
    , m_content(jsonString(json, "content", where))
{
}

std::vector<std::pair<size_t, size_t>> Pattern::findAll(std::string_view text) const
{
    if (m_regex)
        try {
            return m_regex->findAll(text);
        } catch (const Error &e) {
            throw Error(m_where.at("Regex")() + ": " + e.what());
        }
    std::vector<std::pair<size_t, size_t>> matches;
    for (size_t at = text.find(m_literal); at != text.npos; at = text.find(m_literal, at + m_literal.size()))
        matches.emplace_back(at, at + m_literal.size());
    return matches;
}

std::string Pattern::replaceAll(std::string_view text, std::string_view content, size_t limit) const
{
    std::string out;
    size_t done = 0;
    const auto replace = [&](size_t begin, size_t end) {
        out.append(text.substr(done, begin - done)).append(content);
        done = end;
        return out.size() <= limit;
    };
    if (!m_regex) { // a literal streams: a list of its matches would cost 16 bytes each
        for (size_t at = text.find(m_literal); at != text.npos; at = text.find(m_literal, at + m_literal.size()))
            if (!replace(at, at + m_literal.size()))
                return out;
    } else {
        for (const auto &[begin, end] : findAll(text))
            if (!replace(begin, end))
                return out;
    }
    out.append(text.substr(done));
    return out;
}

size_t rewrittenLimit(size_t bytes)
{
    return bytes > (kMaxRewrittenBytes - kRewriteSlack) / kRewriteGrowth ? kMaxRewrittenBytes
                                                                         : bytes * kRewriteGrowth + kRewriteSlack;
}

void refuseGrowth(const JsonPlace &where, const std::string &type, const char *what, size_t limit)
{
    throw Error(where() + ": the " + type + " " + what + " makes the text longer than " + std::to_string(limit)
        + " bytes, the most it may become (" + std::to_string(kRewriteGrowth) + " times its length plus "
        + std::to_string(kRewriteSlack) + " bytes, at most " + std::to_string(kMaxRewrittenBytes >> 20) + " MiB); a "
        + what + " that expands text this much is refused");
}

std::unique_ptr<Normalizer> makeNormalizer(const Json &json, const JsonPlace &where)
{
    if (json.is_null())
        return nullptr;
    const std::string type = typeOf(json, where);
    return std::make_unique<BoundedNormalizer>(makeUncheckedNormalizer(type, json, where), where, type);
}

namespace {

template <NormalForm form> std::unique_ptr<Normalizer> unicodeForm(const Json &, const JsonPlace &)
{
    return std::make_unique<UnicodeForm>(form);
}

std::unique_ptr<Normalizer> strip(const Json &json, const JsonPlace &where)
{
    return std::make_unique<StripNormalizer>(
        jsonBool(json, "strip_left", where, true), jsonBool(json, "strip_right", where, true));
}

std::unique_ptr<Normalizer> prepend(const Json &json, const JsonPlace &where)
{
    return std::make_unique<Prepend>(jsonString(json, "prepend", where));
}

constexpr ComponentType<Normalizer> kNormalizers[]
    = {{"NFC", unicodeForm<NormalForm::NFC>}, {"NFD", unicodeForm<NormalForm::NFD>},
        {"NFKC", unicodeForm<NormalForm::NFKC>}, {"NFKD", unicodeForm<NormalForm::NFKD>},
        {"Lowercase", madeBare<Normalizer, Lowercase>}, {"StripAccents", madeBare<Normalizer, StripAccents>},
        {"Strip", strip}, {"Replace", madeFromJson<Normalizer, Replace>}, {"Prepend", prepend},
        {"BertNormalizer", madeFromJson<Normalizer, BertNormalizer>},
        {"Sequence", madeFromJson<Normalizer, NormalizerSequence>}};

std::unique_ptr<Normalizer> makeUncheckedNormalizer(const std::string &type, const Json &json, const JsonPlace &where)
{
    return makeComponent(type, kNormalizers, "normalizer", json, where);
}

} // namespace

uint32_t byteLevelChar(unsigned char byte)
{
    return byteLevelAlphabet().toChar[byte];
}

std::string_view byteLevelUtf8(unsigned char byte)
{
    return byteLevelAlphabet().toUtf8[byte];
}

int byteOfByteLevelChar(uint32_t cp)
{
    return cp < byteLevelAlphabet().toByte.size() ? byteLevelAlphabet().toByte[cp] : -1;
}

int byteFallbackValue(std::string_view token)
{
    if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>')
        return -1;
    int value = 0;
    for (char c : token.substr(3, 2)) {
        const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (digit < 0)
            return -1;
        value = value * 16 + digit;
    }
    return value;
}

} // namespace atlas::pipeline
