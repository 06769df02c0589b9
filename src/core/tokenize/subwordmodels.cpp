#include "io/jsonread.h"
#include "tokenize/encodingprogress.h"
#include "tokenize/pipeline.h"
#include "tokenize/subwordtables.h"
#include "tokenize/unicodetext.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <unordered_map>

namespace atlas::pipeline {

namespace {

using namespace unicode;

// Byte-pair encoding as the crate's models::bpe: characters (with the continuing-subword prefix and end-of-word
// suffix), byte fallback or the unknown token for characters not in the vocabulary, then the merges by rank,
// lowest rank first and leftmost first among equals.
class Bpe : public SubwordModel
{
public:
    Bpe(const Json &json, const JsonPlace &where, VocabEntries *vocab)
    {
        const auto dropout = json.find("dropout");
        if (dropout != json.end() && !dropout->is_null() && !(dropout->is_number() && dropout->get<double>() == 0.0))
            throw Error(where.at("dropout")() + ": BPE dropout (" + shownJson(*dropout)
                + ") randomises tokenisation for training; set it to null to open this tokenizer");
        m_vocab.read(json.contains("vocab") ? json["vocab"] : Json(), vocab, where.at("vocab"));
        m_unk = optionalTokenId(json, "unk_token", m_vocab, where);
        m_fuseUnk = jsonBool(json, "fuse_unk", where, false);
        m_byteFallback = jsonBool(json, "byte_fallback", where, false);
        m_ignoreMerges = jsonBool(json, "ignore_merges", where, false);
        m_prefix = jsonString(json, "continuing_subword_prefix", where, "");
        m_suffix = jsonString(json, "end_of_word_suffix", where, "");
        readMerges(json.contains("merges") ? json["merges"] : Json::array(), where.at("merges"));
    }

    std::string kind() const override { return "BPE"; }
    std::string continuationPrefix() const override { return m_prefix; }
    int idOf(std::string_view token) const override { return m_vocab.idOf(token); }
    const std::string *tokenOf(int id) const override { return m_vocab.tokenOf(id); }
    int vocabSize() const override { return m_vocab.count; }
    int unknownId() const override { return m_unk; }

    void tokenize(std::string_view word, std::vector<int> &ids) const override
    {
        if (word.empty())
            return;
        if (m_ignoreMerges)
            if (const int id = m_vocab.idOf(word); id >= 0) {
                ids.push_back(id);
                return;
            }
        if (m_cache.find(word, ids))
            return;
        std::vector<int> wordIds = merged(symbolsOf(word));
        ids.insert(ids.end(), wordIds.begin(), wordIds.end());
        m_cache.store(word, std::move(wordIds));
    }

private:
    struct Merge
    {
        int rank, result;
    };

    void readMerges(const Json &merges, const JsonPlace &where)
    {
        if (!merges.is_array())
            throw Error(where() + ": expected an array of merges");
        m_merges.reserve(merges.size());
        std::string_view left, right;
        std::string result;
        for (size_t i = 0; i < merges.size(); ++i) {
            const Json &m = merges[i];
            if (m.is_string()) { // "left right"
                const std::string_view line = m.get_ref<const std::string &>();
                const size_t space = line.find(' ');
                if (space == line.npos || line.find(' ', space + 1) != line.npos)
                    throw Error(where.at(i)() + ": expected two tokens separated by one space, got \""
                        + std::string(line.substr(0, 60)) + "\"");
                left = line.substr(0, space);
                right = line.substr(space + 1);
            } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) { // ["left", "right"]
                left = m[0].get_ref<const std::string &>();
                right = m[1].get_ref<const std::string &>();
            } else {
                throw Error(where.at(i)() + ": expected \"left right\" or [\"left\", \"right\"], got " + shownJson(m));
            }
            const int a = m_vocab.idOf(left), b = m_vocab.idOf(right);
            result.assign(left).append(right.substr(right.starts_with(m_prefix) ? m_prefix.size() : 0));
            const int c = m_vocab.idOf(result);
            for (const auto &[id, token] : {std::pair<int, std::string_view> {a, left}, {b, right}, {c, result}})
                if (id < 0)
                    throw Error(where.at(i)() + ": \"" + std::string(token.substr(0, 60)) + "\" is not in model.vocab");
            // As the crate: a pair listed twice keeps its later rank.
            m_merges.put(uint64_t(uint32_t(a)) << 32 | uint32_t(b), Merge {int(i), c});
        }
    }

    const Merge *findMerge(int left, int right) const
    {
        return m_merges.find(uint64_t(uint32_t(left)) << 32 | uint32_t(right));
    }

    // The word's characters as ids, before any merge.
    std::vector<int> symbolsOf(std::string_view word) const
    {
        std::vector<int> symbols;
        int unk = -1; // a pending unknown token (fused while fuse_unk)
        std::string s;
        for (size_t pos = 0; pos < word.size();) {
            const int length = decodeUtf8(word, pos).length;
            s.assign(pos > 0 ? m_prefix : std::string());
            s.append(word.substr(pos, length));
            pos += length;
            if (pos == word.size())
                s += m_suffix;
            if (const int id = m_vocab.idOf(s); id >= 0) {
                if (unk >= 0)
                    symbols.push_back(unk), unk = -1;
                symbols.push_back(id);
                continue;
            }
            if (m_byteFallback) {
                std::vector<int> bytes;
                for (unsigned char b : s) {
                    const int id = m_vocab.idOf(byteFallbackToken(b));
                    if (id < 0) {
                        bytes.clear();
                        break;
                    }
                    bytes.push_back(id);
                }
                if (!bytes.empty()) {
                    // As the crate, a pending unknown token is not flushed before the bytes.
                    symbols.insert(symbols.end(), bytes.begin(), bytes.end());
                    continue;
                }
            }
            if (m_unk >= 0) {
                if (unk >= 0 && !m_fuseUnk)
                    symbols.push_back(unk);
                unk = m_unk;
            }
            // Without an unknown token the character is dropped, as the crate does.
        }
        if (unk >= 0)
            symbols.push_back(unk);
        return symbols;
    }

    // The crate's Word::merge_all: a heap of candidate merges keyed by (rank, position) over a linked list.
    std::vector<int> merged(std::vector<int> symbols) const
    {
        struct Node
        {
            int symbol, prev, next;
            bool alive;
        };
        struct Candidate
        {
            int rank, pos, result;
            bool operator>(const Candidate &o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
        };
        const int n = static_cast<int>(symbols.size());
        if (n < 2)
            return symbols;
        std::vector<Node> nodes(n);
        for (int i = 0; i < n; ++i)
            nodes[i] = {symbols[i], i - 1, i + 1 < n ? i + 1 : -1, true};
        std::vector<Candidate> heap;
        auto consider = [&](int pos) {
            if (pos < 0 || nodes[pos].next < 0)
                return;
            if (const Merge *m = findMerge(nodes[pos].symbol, nodes[nodes[pos].next].symbol)) {
                heap.push_back({m->rank, pos, m->result});
                std::push_heap(heap.begin(), heap.end(), std::greater<>());
            }
        };
        for (int i = 0; i + 1 < n; ++i)
            consider(i);
        int merges = 0; // a text with no pre-tokenizer (Llama's, Mistral's) is one word: its progress is the merges'
        while (!heap.empty()) {
            std::pop_heap(heap.begin(), heap.end(), std::greater<>());
            const Candidate c = heap.back();
            heap.pop_back();
            Node &a = nodes[c.pos];
            if (!a.alive || a.next < 0)
                continue;
            const Merge *m = findMerge(a.symbol, nodes[a.next].symbol);
            if (!m || m->result != c.result)
                continue; // stale: a neighbour changed since this pair was queued
            Node &b = nodes[a.next];
            a.symbol = c.result;
            b.alive = false;
            a.next = b.next;
            if (a.next >= 0)
                nodes[a.next].prev = c.pos;
            consider(a.prev);
            consider(c.pos);
            if (++merges % 4096 == 0)
                EncodingProgress::reached(size_t(merges), size_t(n - 1));
        }
        std::vector<int> ids;
        for (int i = 0; i >= 0; i = nodes[i].next)
            ids.push_back(nodes[i].symbol);
        return ids;
    }

    Vocabulary m_vocab;
    FlatTable<uint64_t, Merge, PairHash> m_merges;
    int m_unk = -1;
    bool m_fuseUnk = false, m_byteFallback = false, m_ignoreMerges = false;
    std::string m_prefix, m_suffix;
    WordCache m_cache;
};

// WordPiece as BERT: the longest vocabulary entry from the left, then the longest "##…" continuation, and so on;
// a word with any part that matches nothing, or longer than max_input_chars_per_word, is one unknown token.
class WordPiece : public SubwordModel
{
public:
    WordPiece(const Json &json, const JsonPlace &where, VocabEntries *vocab)
    {
        m_vocab.read(json.contains("vocab") ? json["vocab"] : Json(), vocab, where.at("vocab"));
        init(json, where);
    }

    std::string kind() const override { return "WordPiece"; }
    std::string continuationPrefix() const override { return m_prefix; }
    int idOf(std::string_view token) const override { return m_vocab.idOf(token); }
    const std::string *tokenOf(int id) const override { return m_vocab.tokenOf(id); }
    int vocabSize() const override { return m_vocab.count; }
    int unknownId() const override { return m_unk; }

    void tokenize(std::string_view word, std::vector<int> &ids) const override
    {
        size_t chars = 0;
        for (size_t pos = 0; pos < word.size(); pos += decodeUtf8(word, pos).length)
            ++chars;
        if (chars > m_maxChars) {
            ids.push_back(m_unk);
            return;
        }
        std::vector<int> pieces;
        std::string candidate;
        for (size_t start = 0; start < word.size();) {
            // No candidate longer than the longest token: a long word costs its length times that, not its square
            // (max_input_chars_per_word may be as large as a file likes).
            size_t end = std::min(word.size(), start + m_vocab.longest);
            while (end > start && end < word.size() && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80)
                --end;
            int found = -1;
            while (start < end) {
                candidate.assign(start > 0 ? m_prefix : std::string());
                candidate.append(word.substr(start, end - start));
                if ((found = m_vocab.idOf(candidate)) >= 0)
                    break;
                do
                    --end;
                while (end > start && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80);
            }
            if (found < 0) {
                ids.push_back(m_unk);
                return;
            }
            pieces.push_back(found);
            start = end;
        }
        ids.insert(ids.end(), pieces.begin(), pieces.end());
    }

private:
    void init(const Json &json, const JsonPlace &where)
    {
        m_unk = optionalTokenId(json, "unk_token", m_vocab, where);
        if (m_unk < 0)
            throw Error(where.at("unk_token")() + ": WordPiece needs an unknown token");
        m_prefix = jsonString(json, "continuing_subword_prefix", where, "##");
        const auto max = json.find("max_input_chars_per_word");
        if (max != json.end() && !max->is_null()) {
            if (!isIntegerUpTo(*max, std::numeric_limits<int32_t>::max()))
                throw Error(where.at("max_input_chars_per_word")() + ": expected a non-negative integer, got "
                    + shownJson(*max));
            m_maxChars = max->get<size_t>();
        }
    }

    Vocabulary m_vocab;
    int m_unk = -1;
    std::string m_prefix;
    size_t m_maxChars = 100;
};

// Unigram as the crate's encode_optimized: Viterbi over the pieces' log-probabilities, a character no piece
// covers scored as the lowest piece minus 10 and read as the unknown token (runs of them fused), then byte
// fallback for unknown stretches when the vocabulary has the <0xNN> pieces.
class Unigram : public SubwordModel
{
public:
    Unigram(const Json &json, const JsonPlace &where)
        : m_where(where)
    {
        const Json &vocab = json.contains("vocab") ? json["vocab"] : Json();
        const JsonPlace at = where.at("vocab");
        double minScore = 0;
        if (!vocab.is_array() || vocab.empty())
            throw Error(at() + ": expected a non-empty array of [piece, score]");
        checkVocabularySize(vocab.size(), at());
        m_pieces.reserve(vocab.size());
        for (size_t i = 0; i < vocab.size(); ++i) {
            const Json &entry = vocab[i];
            if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number()
                || !std::isfinite(entry[1].get<double>()))
                throw Error(at.at(i)() + ": expected [piece, score] with a finite score, got " + shownJson(entry));
            m_pieces.push_back(entry[0].get<std::string>());
            const double score = entry[1].get<double>();
            m_ids.emplace(m_pieces.back(), int(i));
            m_lattice.add(m_pieces.back(), int(i), score);
            minScore = i == 0 ? score : std::min(minScore, score);
        }
        const auto unk = json.find("unk_id");
        if (unk != json.end() && !unk->is_null()) {
            if (!isIntegerUpTo(*unk, int64_t(m_pieces.size()) - 1))
                throw Error(where.at("unk_id")() + ": expected a piece index below " + std::to_string(m_pieces.size())
                    + ", got " + shownJson(*unk));
            m_unk = unk->get<int>();
        }
        m_unkGiven = unk == json.end() ? "missing" : "null";
        m_byteFallback = jsonBool(json, "byte_fallback", where, false);
        m_lattice.link(m_unk, minScore - kUnknownPenalty);
    }

    std::string kind() const override { return "Unigram"; }
    int idOf(std::string_view token) const override
    {
        const auto it = m_ids.find(token);
        return it == m_ids.end() ? -1 : it->second;
    }
    const std::string *tokenOf(int id) const override
    {
        return id >= 0 && size_t(id) < m_pieces.size() ? &m_pieces[id] : nullptr;
    }
    int vocabSize() const override { return int(m_pieces.size()); }
    int unknownId() const override { return m_unk; }

    void tokenize(std::string_view text, std::vector<int> &ids) const override
    {
        if (text.empty())
            return;
        if (m_cache.find(text, ids))
            return;
        std::vector<int> out;
        for (const auto &[begin, end, id] : m_lattice.bestPath(text)) {
            const std::string_view piece = text.substr(begin, end - begin);
            if (const int known = idOf(piece); known >= 0) {
                out.push_back(known);
                continue;
            }
            if (m_byteFallback && appendBytes(piece, out))
                continue;
            if (m_unk < 0) // as the crate, which fails on such a text too
                throw Error(m_where.at("unk_id")() + ": the Unigram model has no unknown token (unk_id is " + m_unkGiven
                    + "), and the text's \"" + std::string(piece.substr(0, 40)) + "\" is not one of its pieces"
                    + (m_byteFallback ? "" : " (nor is byte_fallback on)")
                    + ": give unk_id the index of the <unk> piece");
            out.push_back(m_unk);
        }
        ids.insert(ids.end(), out.begin(), out.end());
        m_cache.store(text, std::move(out));
    }

private:
    static constexpr double kUnknownPenalty = 10.0;

    bool appendBytes(std::string_view piece, std::vector<int> &out) const
    {
        std::vector<int> bytes;
        for (unsigned char b : piece) {
            const int id = idOf(byteFallbackToken(b));
            if (id < 0)
                return false;
            bytes.push_back(id);
        }
        out.insert(out.end(), bytes.begin(), bytes.end());
        return true;
    }

    JsonPlace m_where;
    std::string m_unkGiven; // "missing" or "null", when the model has no unk_id
    std::vector<std::string> m_pieces;
    TokenIds m_ids;
    UnigramLattice m_lattice;
    int m_unk = -1;
    bool m_byteFallback = false;
    WordCache m_cache;
};

} // namespace

void UnigramLattice::add(std::string_view piece, int id, double score)
{
    m_trie.insert(piece, id);
    if (size_t(id) >= m_scores.size())
        m_scores.resize(size_t(id) + 1, 0.0);
    m_scores[size_t(id)] = score;
}

void UnigramLattice::link(int unknownId, double unknownScore)
{
    m_trie.link();
    m_unknown = unknownId;
    m_unknownScore = unknownScore;
}

// The lattice's edges by their end (ByteTrie::step): a piece of `length` bytes ending at byte `end` is an edge
// from end - length, which is final by then; the character ending there is an unknown edge when no piece of its
// length covers it. The edges and their order (by start, the unknown one last) are those of a walk from each
// start, in time linear in the text plus the edges however long the pieces are.
std::vector<UnigramLattice::Span> UnigramLattice::bestPath(std::string_view text) const
{
    struct Node
    {
        int id = -1;
        double score = 0;
        size_t start = std::string_view::npos; // npos: not reached yet
    };
    const size_t n = text.size();
    std::vector<Node> best(n + 1);
    const auto isBoundary
        = [&](size_t pos) { return pos == 0 || pos == n || (static_cast<unsigned char>(text[pos]) & 0xC0) != 0x80; };
    const auto offer = [&](size_t start, size_t end, int id, double score) {
        Node &target = best[end];
        const double candidate = score + best[start].score;
        if (target.start == std::string_view::npos || candidate > target.score)
            target = {id, candidate, start};
    };
    size_t charStart = 0;
    for (size_t end = 1, node = 0; end <= n; ++end) {
        if (isBoundary(end - 1))
            charStart = end - 1;
        node = size_t(m_trie.step(int(node), static_cast<unsigned char>(text[end - 1])));
        const bool charEnds = isBoundary(end);
        bool coversChar = false;
        m_trie.eachEnding(int(node), [&](size_t length, int id) {
            const size_t start = end - length;
            if (!isBoundary(start) || !charEnds) // pieces and text are UTF-8: edges join characters
                return;
            offer(start, end, id, m_scores[size_t(id)]);
            coversChar = coversChar || start == charStart;
        });
        if (charEnds && !coversChar)
            offer(charStart, end, m_unknown, m_unknownScore);
    }
    std::vector<Span> spans;
    for (size_t end = n; end > 0;) {
        const Node &node = best[end];
        const bool unknown = node.id == m_unknown;
        if (unknown && !spans.empty() && spans.back().id == m_unknown)
            spans.back().begin = node.start; // the crate fuses runs of unknown characters
        else
            spans.push_back({node.start, end, node.id});
        end = node.start;
    }
    std::reverse(spans.begin(), spans.end());
    return spans;
}

void ByteTrie::insert(std::string_view key, int value)
{
    int node = 0;
    for (unsigned char byte : key) {
        int next = child(node, byte);
        if (next < 0) {
            next = static_cast<int>(m_values.size());
            m_values.push_back(-1);
            m_children.emplace(uint64_t(node) << 8 | byte, next);
        }
        node = next;
    }
    if (m_values[node] < 0) // the first of two equal keys wins, as a map insert
        m_values[node] = value;
}

void ByteTrie::link()
{
    const size_t nodes = m_values.size();
    std::vector<int> parent(nodes, 0);
    std::vector<unsigned char> byteOf(nodes, 0);
    for (const auto &[key, node] : m_children)
        parent[size_t(node)] = int(key >> 8), byteOf[size_t(node)] = static_cast<unsigned char>(key & 0xFF);
    m_depth.assign(nodes, 0);
    for (size_t n = 1; n < nodes; ++n) // a node is made after its parent
        m_depth[n] = m_depth[size_t(parent[n])] + 1;
    std::vector<int> order(nodes); // breadth first: by depth
    for (size_t n = 0; n < nodes; ++n)
        order[n] = int(n);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return m_depth[size_t(a)] < m_depth[size_t(b)]; });
    m_fail.assign(nodes, 0);
    m_output.assign(nodes, -1);
    for (int n : order) {
        if (n == 0)
            continue;
        const int p = parent[size_t(n)];
        int fail = 0;
        if (p != 0)
            for (int f = m_fail[size_t(p)];; f = m_fail[size_t(f)]) {
                if (const int next = child(f, byteOf[size_t(n)]); next >= 0) {
                    fail = next;
                    break;
                }
                if (f == 0)
                    break;
            }
        m_fail[size_t(n)] = fail;
        m_output[size_t(n)] = fail != 0 && m_values[size_t(fail)] >= 0 ? fail : m_output[size_t(fail)];
    }
}

int ByteTrie::child(int node, unsigned char byte) const
{
    const auto it = m_children.find(uint64_t(node) << 8 | byte);
    return it == m_children.end() ? -1 : it->second;
}

std::unique_ptr<SubwordModel> makeSubwordModel(const Json &json, const JsonPlace &where, VocabEntries *vocab)
{
    const std::string type = json.is_object() && !json.contains("type") && json.contains("merges")
        ? std::string("BPE") // files written before "type" was stored
        : typeOf(json, where);
    if (type == "BPE")
        return std::make_unique<Bpe>(json, where, vocab);
    if (type == "WordPiece")
        return std::make_unique<WordPiece>(json, where, vocab);
    if (type == "Unigram")
        return std::make_unique<Unigram>(json, where);
    refuseType(type, "model", "BPE, WordPiece, Unigram", where);
}

} // namespace atlas::pipeline
