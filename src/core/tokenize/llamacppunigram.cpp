#include "tokenize/llamacppunigram.h"

#include "tokenize/ggufvocabulary.h"
#include "tokenize/subwordtables.h"
#include "util/error.h"

#include <cfloat>
#include <cstring>

namespace atlas {

namespace {

using namespace gguftoken;

const char *const kCharsmapKey = "tokenizer.ggml.precompiled_charsmap";
const std::string kEscapedSpace = "\u2581";

// SentencePiece's precompiled charsmap: a little-endian uint32 byte count, that many bytes of XOR-compressed compact
// double array (Kanda 2018; each node packs BASE in bits 10–30, shifted 8 more when bit 9 is set, LEAF in bit 8, the
// byte it is reached by in bits 0–7, and bit 31 marks a node holding a replacement's offset), then the replacement
// strings, each ending in a NUL byte.
class Charsmap
{
public:
    Charsmap(const std::string &bytes, const std::string &file)
        : m_file(file)
    {
        if (bytes.empty())
            return;
        if (bytes.size() < 4)
            fail("holds " + std::to_string(bytes.size()) + " bytes, too few for its 4-byte header");
        const auto *b = reinterpret_cast<const unsigned char *>(bytes.data());
        const uint64_t arrayBytes = uint64_t(b[0]) | uint64_t(b[1]) << 8 | uint64_t(b[2]) << 16 | uint64_t(b[3]) << 24;
        if (arrayBytes + 4 >= bytes.size()) // as llama.cpp: the replacement strings must follow
            fail("its header gives " + std::to_string(arrayBytes) + " bytes of double array, and it holds "
                + std::to_string(bytes.size() - 4) + " after the header");
        m_nodes.resize(arrayBytes / 4);
        for (size_t i = 0; i < m_nodes.size(); ++i) {
            const unsigned char *n = b + 4 + 4 * i;
            m_nodes[i] = uint32_t(n[0]) | uint32_t(n[1]) << 8 | uint32_t(n[2]) << 16 | uint32_t(n[3]) << 24;
        }
        m_replacements = bytes.substr(4 + arrayBytes);
    }

    // The longest prefix of text[at…] the map rewrites: its length (0 for none) and its replacement.
    size_t longestPrefix(std::string_view text, size_t at, std::string_view &replacement) const
    {
        if (m_nodes.empty())
            return 0;
        size_t length = 0, offset = 0;
        uint32_t node = base(0);
        for (size_t p = at; p < text.size(); ++p) {
            const auto c = static_cast<unsigned char>(text[p]);
            if (c == 0)
                break;
            node ^= c;
            if ((packed(node) & ((1U << 31) | 0xFF)) != c)
                break;
            const bool leaf = (packed(node) >> 8) & 1;
            node ^= base(node);
            if (leaf) {
                length = p - at + 1;
                offset = packed(node) & ((1U << 31) - 1);
            }
        }
        if (length == 0)
            return 0;
        if (offset >= m_replacements.size())
            fail("a node gives replacement " + std::to_string(offset) + ", past its "
                + std::to_string(m_replacements.size()) + " bytes of replacements");
        const size_t end = m_replacements.find('\0', offset);
        if (end == std::string::npos)
            fail("the replacement at " + std::to_string(offset) + " has no NUL byte ending it");
        replacement = std::string_view(m_replacements).substr(offset, end - offset);
        return length;
    }

private:
    uint32_t packed(size_t index) const
    {
        if (index >= m_nodes.size())
            fail("a node points to node " + std::to_string(index) + ", past its " + std::to_string(m_nodes.size()));
        return m_nodes[index];
    }
    uint32_t base(size_t index) const
    {
        const uint32_t n = packed(index);
        return (n >> 10) << ((n & (1U << 9)) >> 6);
    }
    [[noreturn]] void fail(const std::string &problem) const
    {
        throw Error(m_file + ": metadata key '" + kCharsmapKey + "': " + problem);
    }

    std::string m_file;
    std::vector<uint32_t> m_nodes;
    std::string m_replacements;
};

size_t utf8Length(unsigned char lead)
{
    return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

class LlamaCppUnigram : public pipeline::SubwordModel
{
public:
    explicit LlamaCppUnigram(LlamaCppUnigramVocabulary v)
        : m_file(v.file)
        , m_tokens(std::move(v.tokens))
        , m_charsmap(v.charsmap, v.file)
        , m_addSpacePrefix(v.addSpacePrefix)
        , m_removeExtraWhitespaces(v.removeExtraWhitespaces)
        , m_unknown(v.unknownId)
    {
        float minScore = FLT_MAX;
        m_ids.reserve(m_tokens.size());
        for (size_t id = 0; id < m_tokens.size(); ++id) {
            const std::string &token = m_tokens[id];
            m_ids.emplace(token, int(id)); // the first of equal tokens, as llama.cpp's token-to-id map
            const int64_t type = v.types[id];
            if (type == kNormal)
                minScore = std::min(minScore, float(v.scores[id]));
            if (token.empty() || (type != kNormal && type != kUserDefined && type != kUnused))
                continue;
            // a user-defined token scores 0, above every normal token's log-probability
            m_lattice.add(token, int(id), type == kUserDefined ? 0.0 : v.scores[id]);
        }
        // in float, as llama.cpp computes it
        m_lattice.link(m_unknown, double(minScore - 10.0f));
    }

    std::string kind() const override { return "Unigram"; }
    int idOf(std::string_view token) const override
    {
        const auto it = m_ids.find(token);
        return it == m_ids.end() ? -1 : it->second;
    }
    const std::string *tokenOf(int id) const override
    {
        return id >= 0 && size_t(id) < m_tokens.size() ? &m_tokens[size_t(id)] : nullptr;
    }
    int vocabSize() const override { return int(m_tokens.size()); }
    int unknownId() const override { return m_unknown; }

    void tokenize(std::string_view text, std::vector<int> &ids) const override
    {
        if (m_cache.find(text, ids))
            return;
        const std::string normalized = normalize(text);
        std::vector<int> out;
        if (!normalized.empty())
            for (const auto &span : m_lattice.bestPath(normalized))
                out.push_back(span.id);
        ids.insert(ids.end(), out.begin(), out.end());
        m_cache.store(text, std::move(out));
    }

private:
    // llm_tokenizer_ugm_session::normalize: spaces escaped as "▁" (llama.cpp's escape_whitespaces, on for every 't5'
    // file), never treated as a suffix.
    std::string normalize(std::string_view text) const
    {
        const size_t limit = pipeline::rewrittenLimit(text.size());
        std::string out;
        out.reserve(text.size() * 3 / 2 + 8);
        bool spacePrepended = false, inWord = false;
        for (size_t at = 0; at < text.size();) {
            std::string_view replacement;
            const size_t consumed = normalizedPrefix(text, at, replacement);
            for (const char c : replacement) {
                if (c != ' ') {
                    if (!inWord) {
                        inWord = true;
                        if ((m_addSpacePrefix && !spacePrepended) || m_removeExtraWhitespaces) {
                            out += kEscapedSpace;
                            spacePrepended = true;
                        }
                    }
                    out += c;
                } else {
                    inWord = false;
                    if (!m_removeExtraWhitespaces)
                        out += kEscapedSpace;
                }
            }
            if (out.size() > limit)
                throw Error(m_file + ": metadata key '" + kCharsmapKey + "': its replacements grow a text of "
                    + std::to_string(text.size()) + " bytes past " + std::to_string(limit)
                    + " bytes; no normalization grows text that much");
            at += consumed;
        }
        return out;
    }

    // llm_tokenizer_ugm_session::normalize_prefix: the bytes consumed at `at` and what they become. llama.cpp first
    // keeps a user-defined token's text whole; no such text reaches this model, which the pipeline hands the text
    // between the special and added tokens it split off (as llama.cpp's partition does first), so that check, which
    // costs the text's length times the longest such token, is left out.
    size_t normalizedPrefix(std::string_view text, size_t at, std::string_view &replacement) const
    {
        if (const size_t length = m_charsmap.longestPrefix(text, at, replacement); length > 0)
            return length;
        // the pipeline hands over valid UTF-8 only: one character as it is
        const size_t length = std::min(utf8Length(static_cast<unsigned char>(text[at])), text.size() - at);
        replacement = text.substr(at, length);
        return length;
    }

    std::string m_file;
    std::vector<std::string> m_tokens;
    pipeline::TokenIds m_ids;
    Charsmap m_charsmap;
    pipeline::UnigramLattice m_lattice;
    bool m_addSpacePrefix, m_removeExtraWhitespaces;
    int m_unknown;
    pipeline::WordCache m_cache;
};

} // namespace

std::unique_ptr<pipeline::SubwordModel> makeLlamaCppUnigram(LlamaCppUnigramVocabulary vocabulary)
{
    return std::make_unique<LlamaCppUnigram>(std::move(vocabulary));
}

} // namespace atlas
