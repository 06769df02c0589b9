#include "io/jsonread.h"
#include "tokenize/pipeline.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace atlas::pipeline {

namespace {

using namespace unicode;

// Byte-level tokens back to bytes: a token spelled wholly in the byte alphabet gives its bytes, any other token
// (an added token) its own text; the whole is read as UTF-8 with U+FFFD for broken sequences.
class ByteLevelDecoder : public Decoder
{
public:
    void decodeChain(std::vector<std::string> &tokens, size_t) const override
    {
        std::string bytes;
        for (const std::string &token : tokens) {
            std::string own;
            bool inAlphabet = true;
            for (size_t pos = 0; pos < token.size() && inAlphabet;) {
                const DecodedChar c = decodeUtf8(token, pos);
                const int byte = c.codePoint == kInvalidCodePoint ? -1 : byteOfByteLevelChar(c.codePoint);
                inAlphabet = byte >= 0;
                own += static_cast<char>(byte);
                pos += c.length;
            }
            bytes += inAlphabet ? own : token;
        }
        tokens.assign(1, lossyUtf8(bytes));
    }
};

// ▁ back to spaces; the first token loses the space the pre-tokenizer prepended.
class MetaspaceDecoder : public Decoder
{
public:
    MetaspaceDecoder(const Json &json, const JsonPlace &where)
        : m_replacement(jsonString(json, "replacement", where, "\xE2\x96\x81"))
    {
        if (optionalJsonMember(json, "prepend_scheme"))
            m_stripFirst = jsonString(json, "prepend_scheme", where) != "never";
        else
            m_stripFirst = jsonBool(json, "add_prefix_space", where, true);
        if (m_replacement.empty())
            throw Error(where.at("replacement")() + ": expected one character");
    }
    void decodeChain(std::vector<std::string> &tokens, size_t) const override
    {
        for (size_t i = 0; i < tokens.size(); ++i) {
            std::string out;
            const std::string &t = tokens[i];
            for (size_t pos = 0; pos < t.size();) {
                if (t.compare(pos, m_replacement.size(), m_replacement) == 0) {
                    out += ' ';
                    pos += m_replacement.size();
                } else {
                    out += t[pos++];
                }
            }
            if (i == 0 && m_stripFirst && out.starts_with(' '))
                out.erase(0, 1);
            tokens[i] = std::move(out);
        }
    }

private:
    std::string m_replacement;
    bool m_stripFirst = true;
};

std::string replaced(const std::string &text, std::string_view from, std::string_view to)
{
    std::string out;
    size_t done = 0;
    for (size_t at = text.find(from); at != text.npos; at = text.find(from, done)) {
        out.append(text, done, at - done).append(to);
        done = at + from.size();
    }
    return out.append(text, done);
}

// The crate's decoders::wordpiece::cleanup: the spaces BERT's tokenisation put before punctuation and clitics.
std::string cleanedUp(std::string text)
{
    for (auto [from, to] : {std::pair {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
             {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}})
        text = replaced(text, from, to);
    return text;
}

// "##ing" joins the token before it; other tokens after the first get a leading space.
class WordPieceDecoder : public Decoder
{
public:
    WordPieceDecoder(const Json &json, const JsonPlace &where)
        : m_prefix(jsonString(json, "prefix", where, "##"))
        , m_cleanup(jsonBool(json, "cleanup", where, true))
    {
    }
    void decodeChain(std::vector<std::string> &tokens, size_t) const override
    {
        for (size_t i = 0; i < tokens.size(); ++i) {
            std::string &t = tokens[i];
            if (i != 0)
                t = !m_prefix.empty() && t.starts_with(m_prefix) ? t.substr(m_prefix.size()) : " " + t;
            if (m_cleanup)
                t = cleanedUp(std::move(t));
        }
    }

private:
    std::string m_prefix;
    bool m_cleanup;
};

// Runs of <0xNN> tokens become the text their bytes spell, or one U+FFFD per byte when they are not UTF-8.
class ByteFallbackDecoder : public Decoder
{
public:
    void decodeChain(std::vector<std::string> &tokens, size_t) const override
    {
        std::vector<std::string> out;
        std::string bytes;
        size_t byteTokens = 0;
        auto flush = [&] {
            if (byteTokens == 0)
                return;
            if (firstInvalidUtf8(bytes) == std::string::npos)
                out.push_back(bytes);
            else
                for (size_t i = 0; i < byteTokens; ++i)
                    out.emplace_back("\xEF\xBF\xBD");
            bytes.clear();
            byteTokens = 0;
        };
        for (std::string &t : tokens) {
            if (const int b = byteFallbackValue(t); b >= 0) {
                bytes += static_cast<char>(b);
                ++byteTokens;
                continue;
            }
            flush();
            out.push_back(std::move(t));
        }
        flush();
        tokens = std::move(out);
    }
};

class Fuse : public Decoder
{
public:
    void decodeChain(std::vector<std::string> &tokens, size_t) const override
    {
        std::string all;
        for (const std::string &t : tokens)
            all += t;
        tokens.assign(1, all);
    }
};

// Removes up to `start` leading and `stop` trailing copies of one character from each token.
class StripDecoder : public Decoder
{
public:
    StripDecoder(const Json &json, const JsonPlace &where)
        : m_content(jsonString(json, "content", where))
        , m_start(count(json, "start", where))
        , m_stop(count(json, "stop", where))
    {
        if (m_content.empty())
            throw Error(where.at("content")() + ": expected one character");
    }
    void decodeChain(std::vector<std::string> &tokens, size_t) const override
    {
        for (std::string &t : tokens) {
            for (size_t i = 0; i < m_start && t.starts_with(m_content); ++i)
                t.erase(0, m_content.size());
            for (size_t i = 0; i < m_stop && t.ends_with(m_content); ++i)
                t.erase(t.size() - m_content.size());
        }
    }

private:
    static size_t count(const Json &json, const char *name, const JsonPlace &where)
    {
        const auto it = json.find(name);
        if (it == json.end())
            return 0;
        if (!isIntegerUpTo(*it, 1'000'000))
            throw Error(where.at(name)() + ": expected a small non-negative integer, got " + shownJson(*it));
        return it->get<size_t>();
    }

    std::string m_content;
    size_t m_start, m_stop;
};

class ReplaceDecoder : public Decoder
{
public:
    ReplaceDecoder(const Json &json, const JsonPlace &where)
        : m_replace(json, where)
    {
    }
    void decodeChain(std::vector<std::string> &tokens, size_t limit) const override
    {
        size_t bytes = 0;
        for (std::string &t : tokens) {
            t = m_replace(t, limit - std::min(bytes, limit));
            if ((bytes += t.size()) > limit)
                return; // refused by BoundedDecoder
        }
    }

private:
    Replacement m_replace;
};

// The original BPE's end-of-word suffix ("</w>") becomes a space, except after the last token.
class BpeDecoder : public Decoder
{
public:
    BpeDecoder(const Json &json, const JsonPlace &where)
        : m_suffix(jsonString(json, "suffix", where, "</w>"))
    {
    }
    void decodeChain(std::vector<std::string> &tokens, size_t) const override
    {
        for (size_t i = 0; i < tokens.size(); ++i)
            tokens[i] = replaced(tokens[i], m_suffix, i + 1 == tokens.size() ? "" : " ");
    }

private:
    std::string m_suffix;
};

class DecoderSequence : public Decoder
{
public:
    DecoderSequence(const Json &json, const JsonPlace &where)
        : m_steps(readSteps(json, "decoders", where, &makeDecoder))
    {
    }
    void decodeChain(std::vector<std::string> &tokens, size_t limit) const override
    {
        for (const auto &step : m_steps)
            step->decodeChain(tokens, limit);
    }

private:
    std::vector<std::unique_ptr<Decoder>> m_steps;
};

// A component with its output's size checked (pipeline.h: rewrittenLimit).
class BoundedDecoder : public Decoder
{
public:
    BoundedDecoder(std::unique_ptr<Decoder> inner, JsonPlace where, std::string type)
        : m_inner(std::move(inner))
        , m_where(std::move(where))
        , m_type(std::move(type))
    {
    }
    void decodeChain(std::vector<std::string> &tokens, size_t limit) const override
    {
        m_inner->decodeChain(tokens, limit);
        size_t bytes = 0;
        for (const std::string &t : tokens)
            bytes += t.size();
        if (bytes > limit)
            refuseGrowth(m_where, m_type, "decoder", limit);
    }

private:
    std::unique_ptr<Decoder> m_inner;
    JsonPlace m_where;
    std::string m_type;
};

std::unique_ptr<Decoder> makeUncheckedDecoder(const std::string &type, const Json &json, const JsonPlace &where)
{
    static constexpr ComponentType<Decoder> kinds[] = {{"ByteLevel", madeBare<Decoder, ByteLevelDecoder>},
        {"Metaspace", madeFromJson<Decoder, MetaspaceDecoder>}, {"WordPiece", madeFromJson<Decoder, WordPieceDecoder>},
        {"ByteFallback", madeBare<Decoder, ByteFallbackDecoder>}, {"Fuse", madeBare<Decoder, Fuse>},
        {"Strip", madeFromJson<Decoder, StripDecoder>}, {"Replace", madeFromJson<Decoder, ReplaceDecoder>},
        {"BPEDecoder", madeFromJson<Decoder, BpeDecoder>}, {"Sequence", madeFromJson<Decoder, DecoderSequence>}};
    return makeComponent(type, kinds, "decoder", json, where);
}

} // namespace

std::unique_ptr<Decoder> makeDecoder(const Json &json, const JsonPlace &where)
{
    if (json.is_null())
        return nullptr;
    const std::string type = typeOf(json, where);
    return std::make_unique<BoundedDecoder>(makeUncheckedDecoder(type, json, where), where, type);
}

} // namespace atlas::pipeline
